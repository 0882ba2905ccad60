import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ValidateInteger, ValidateText } from '../../common/validators.js';
import { MAX_PLANT_ID } from '../plant-id.js';

/**
 * The spec's Plant as the body of a create: `name`, `id` and `tag`. Responses carry `name`
 * and `tag` only (PlantResponse; the id comes back in the Location header), hence `id` is
 * also marked write-only.
 */
@ApiSchema({ name: 'Plant', description: "A plant to create in the caller's team." })
export class PlantDto {
  @ValidateText({
    description: 'Name of the plant: 1 to 255 characters, not only white space.',
    minLength: 1,
    maxLength: 255,
    notBlank: true,
    example: 'Monstera deliciosa',
  })
  name: string;

  @ValidateInteger({
    optional: true,
    format: 'int64',
    minimum: 1,
    maximum: MAX_PLANT_ID,
    writeOnly: true,
    description:
      "The caller's identifier for the plant, unique within the team. Omitted: the service assigns the team's next free id (highest + 1). Never returned in a body; the Location header of the 201 carries it.",
    example: 7,
    message: ({ property, maximum }) => `${property} must be a positive integer no larger than ${maximum}`,
  })
  id?: number;

  @ValidateText({ optional: true, description: 'Free-form tag, at most 255 characters.', maxLength: 255, example: 'tropical' })
  tag?: string;
}

/**
 * A plant in a response (the 201 of a create, the items of the list): the spec returns
 * `name` and `tag` only, never the id.
 */
@ApiSchema({
  name: 'PlantResponse',
  description: 'A plant as create and list return it: name and tag, never the id (the 201 of a create carries it in the Location header).',
})
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
  @ValidateInteger({ optional: true, query: true, minimum: 1, maximum: 1000, description: 'Maximum number of plants to return: 1 to 1000. Default: 100.' })
  limit: number = 100;

  @ValidateText({ optional: true, description: 'Only plants with exactly this tag.', maxLength: 255 })
  tag?: string;

  @ValidateInteger({
    optional: true,
    query: true,
    format: 'int64',
    minimum: 0,
    maximum: MAX_PLANT_ID,
    description: 'Cursor: only plants with a larger id. The `Link` header of a page gives the next one.',
  })
  after?: number;
}
