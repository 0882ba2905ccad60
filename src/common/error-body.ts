import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** The one error body of every layer: `{"error": <HTTP status>, "message": "<one sentence>"}`. */
@ApiSchema({ name: 'Error', description: 'Every error response, from any layer, has exactly this body.' })
export class ErrorBody {
  @ApiProperty({ type: 'integer', format: 'int32', description: 'The HTTP status code, repeated as an integer.', example: 400 })
  error: number;

  @ApiProperty({ description: 'One human sentence saying what was wrong.', example: 'max_distance must be a number of miles greater than 0 and at most 500' })
  message: string;
}
