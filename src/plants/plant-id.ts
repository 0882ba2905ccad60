import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';

/** 2^53 - 1: every JSON client reads such an id exactly (contract §3). */
export const MAX_PLANT_ID = Number.MAX_SAFE_INTEGER;

/** DELETE /plants/{id}: a positive integer in plain decimal, nothing else. */
@Injectable()
export class ParsePlantIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = /^[1-9][0-9]{0,15}$/.test(value) ? Number(value) : NaN;
    if (!(id <= MAX_PLANT_ID)) {
      throw new BadRequestException(`plant id must be a positive integer no larger than ${MAX_PLANT_ID}`);
    }
    return id;
  }
}
