import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsIntegerIn, IsText, NullMeansDefault, QueryInteger } from '../../common/validators.js';
import { MAX_PLANT_ID } from '../plant-id.js';

/**
 * The spec's Plant: `name`, `id` and `tag` are accepted on create; responses carry `name`
 * and `tag` only (the id comes back in the Location header), hence `id` is write-only.
 */
@ApiSchema({ name: 'Plant', description: 'A plant of the caller\'s team.' })
export class PlantDto {
  @ApiProperty({ description: 'Name of the plant: 1 to 255 characters, not only white space.', minLength: 1, maxLength: 255, example: 'Monstera deliciosa' })
  @IsText(255, { notBlank: true })
  name: string;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 1,
    maximum: MAX_PLANT_ID,
    writeOnly: true,
    description:
      "The caller's identifier for the plant, unique within the team. Omitted: the service assigns the team's next free id (highest + 1). Never returned in a body; the Location header of the 201 carries it.",
    example: 7,
  })
  @NullMeansDefault()
  @IsOptional()
  @IsIntegerIn(1, MAX_PLANT_ID, `id must be a positive integer no larger than ${MAX_PLANT_ID}`)
  id?: number;

  @ApiPropertyOptional({ description: 'Free-form tag, at most 255 characters. Left out of responses when the plant has none.', maxLength: 255, example: 'tropical' })
  @IsOptional()
  @IsText(255, { allowEmpty: true })
  tag?: string;
}

export class ListPlantsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 100, description: 'Maximum number of plants to return.' })
  @IsOptional()
  @QueryInteger()
  @IsIntegerIn(1, 1000, 'limit must be an integer from 1 to 1000')
  limit: number = 100;

  @ApiPropertyOptional({ description: 'Only plants with exactly this tag.', maxLength: 255, example: 'tropical' })
  @IsOptional()
  @IsText(255, { allowEmpty: true })
  tag?: string;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    maximum: MAX_PLANT_ID,
    description: 'Cursor: only plants with a larger id. The `Link` header of a page gives the next one.',
    example: 7,
  })
  @IsOptional()
  @QueryInteger()
  @IsIntegerIn(0, MAX_PLANT_ID, `after must be an integer from 0 to ${MAX_PLANT_ID}`)
  after?: number;
}
