import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ValidateText } from '../../common/validators.js';
import type { Service } from '../service.entity.js';

@ApiSchema({ name: 'AdminServiceRequest', description: 'A service of the chain, for its slug (the path).' })
export class ServiceRequest {
  @ValidateText({ minLength: 1, maxLength: 100, notBlank: true, description: 'What customers read, 1 to 100 characters.', example: 'Curbside pickup' })
  label: string;

  @ValidateText({
    type: 'string',
    optional: true,
    maxLength: 500,
    description: 'More words for the console and clients, at most 500 characters; left out or null: none.',
    example: 'Order ahead; we bring it to your car.',
  })
  description?: string;
}

@ApiSchema({ name: 'AdminService', description: "A service of the chain: what a store's `services` and the search's `services` filter name by its slug." })
export class ServiceView {
  @ApiProperty({ description: 'Its slug: a lowercase letter, then at most 39 lowercase letters, digits or underscores.', example: 'curbside_pickup' })
  slug: string;
  @ApiProperty({ description: 'Its label.', example: 'Curbside pickup' }) label: string;
  @ApiProperty({ description: 'Its description, or null.', type: 'string', nullable: true, example: 'Order ahead; we bring it to your car.' })
  description: string | null;
  @ApiProperty({ description: 'When it last changed (ISO 8601, UTC).', format: 'date-time', example: '2026-11-24T10:00:00.000Z' }) updated_at: string;
}

export const serviceView = (service: Service): ServiceView => ({
  slug: service.slug,
  label: service.label,
  description: service.description,
  updated_at: service.updatedAt.toISOString(),
});
