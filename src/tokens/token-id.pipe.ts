import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';

/** /admin/tokens/{id}: a positive integer in plain decimal, as `tokens list` shows it. */
@Injectable()
export class ParseTokenIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    if (!/^[1-9][0-9]{0,15}$/.test(value) || Number(value) > Number.MAX_SAFE_INTEGER) throw new BadRequestException('token id must be a positive integer');
    return Number(value);
  }
}
