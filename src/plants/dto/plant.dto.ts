import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsIntegerIn, IsText, NullMeansDefault, QueryInteger } from '../../common/validators.js';
import { MAX_PLANT_ID } from '../plant-id.js';

/**
 * The spec's Plant as the body of a create: `name`, `id` and `tag`. Responses carry `name`
 * and `tag` only (PlantResponse; the id comes back in the Location header), hence `id` is
 * also marked write-only.
 */
@ApiSchema({ name: 'Plant', description: 'A plant to create in the caller\'s team.' })
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

  @ApiPropertyOptional({ description: 'Free-form tag, at most 255 characters.', maxLength: 255, example: 'tropical' })
  @IsOptional()
  @IsText(255, { allowEmpty: true })
  tag?: string;
}

/**
 * A plant in a response (the 201 of a create, the items of the list): the spec returns
 * `name` and `tag` only, never the id.
 */
@ApiSchema({ name: 'PlantResponse', description: 'A plant as create and list return it: name and tag, never the id (the 201 of a create carries it in the Location header).' })
export class PlantResponse {
  @ApiProperty({ description: 'Name of the plant.', example: 'Monstera deliciosa' })
  name: string;

  @ApiPropertyOptional({ description: 'Tag of the plant; left out when the plant has none.', example: 'tropical' })
  tag?: string;
}

/**
 * No `example` or `default` on these optional filters: Swagger UI's "Try it out" fills a
 * parameter from either, and a prefilled `tag` or `after` hides the plant just created.
 * The default of `limit` is in its description instead.
 */
export class ListPlantsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, description: 'Maximum number of plants to return: 1 to 1000. Default: 100.' })
  @IsOptional()
  @QueryInteger()
  @IsIntegerIn(1, 1000, 'limit must be an integer from 1 to 1000')
  limit: number = 100;

  @ApiPropertyOptional({ description: 'Only plants with exactly this tag.', maxLength: 255 })
  @IsOptional()
  @IsText(255, { allowEmpty: true })
  tag?: string;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    maximum: MAX_PLANT_ID,
    description: 'Cursor: only plants with a larger id. The `Link` header of a page gives the next one.',
  })
  @IsOptional()
  @QueryInteger()
  @IsIntegerIn(0, MAX_PLANT_ID, `after must be an integer from 0 to ${MAX_PLANT_ID}`)
  after?: number;
}
