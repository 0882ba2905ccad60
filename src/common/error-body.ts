import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PROBLEM_CODES, type ProblemCode } from './problem-codes.js';

/** The one error body of every layer: `{"error": <HTTP status>, "message": "<one sentence>"}`. */
@ApiSchema({ name: 'Error', description: 'Every error response, from any layer, has exactly this body.' })
export class ErrorBody {
  @ApiProperty({ type: 'integer', format: 'int32', description: 'The HTTP status code, repeated as an integer.', example: 400 })
  error: number;

  @ApiProperty({ description: 'One human sentence saying what was wrong.', example: 'max_distance must be a number of miles greater than 0 and at most 500' })
  message: string;
}

@ApiSchema({ name: 'AdminProblem', description: 'One problem of a refused admin request, as data: what the message says, one part each.' })
export class ProblemView {
  @ApiProperty({
    description: 'The field of the body, with its path (`special_hours[1].date`, 0-based), for a request body.',
    required: false,
    example: 'state',
  })
  field?: string;
  @ApiProperty({ description: 'The line of the file (the header is line 1), for a CSV file.', type: 'integer', required: false, example: 3 })
  line?: number;
  @ApiProperty({
    description: 'The CSV column, or null when the problem is the whole line or file, for a CSV file.',
    type: 'string',
    nullable: true,
    required: false,
    example: 'state',
  })
  column?: string | null;
  @ApiProperty({
    description: "What is wrong, for programs: one code per mistake, the same at every admin door (a PUT's body, a line of the store CSV).",
    enum: PROBLEM_CODES,
    enumName: 'AdminProblemCode',
    example: 'bad_state',
  })
  code: ProblemCode;
  @ApiProperty({ description: 'What is wrong, in the words of the message (after the field or column).', example: '"XX" is not a US state or territory code' })
  message: string;
}

/**
 * The error body of the admin routes: the one body, and the problems as data beside it, so that a
 * program (the console) need not take the message apart. The interface's own operations answer
 * ErrorBody and nothing more.
 */
@ApiSchema({
  name: 'AdminError',
  description: 'An admin error: `error` and `message` as every error, and `problems` as data when the request was refused for its content.',
})
export class AdminErrorBody extends ErrorBody {
  @ApiProperty({ type: [ProblemView], required: false, description: 'Each problem found, in the order of the message.' })
  problems?: ProblemView[];
}

/** What an admin refusal carries beside its message (AllExceptionsFilter writes it on /admin routes only). */
export type Problem = ProblemView;

/**
 * Whether answers on `path` may carry `problems`: the admin routes, but for the admin search,
 * which answers exactly what POST /locations/nearest answers, errors included.
 */
export const carriesProblems = (path: string): boolean => path.startsWith('/admin/') && !path.startsWith('/admin/locations/');
