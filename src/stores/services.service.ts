import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Service } from './service.entity.js';
import { StoreCatalog } from './store-catalog.js';

/** No service has this slug. */
export class ServiceNotFoundError extends Error {
  constructor(readonly slug: string) {
    super(`service ${slug} not found`);
  }
}

/** A service as the admin API and the command line give it (checked there). */
export interface ServiceFields {
  label: string;
  description?: string | null;
}

/**
 * The chain's services, for the admin API and the command line: the vocabulary of a store's
 * `services` and of the search's filter. Written through the catalogue's one door
 * (StoreCatalog.write), as a holiday is: the version bumped, so that every instance's search index
 * reloads with the new vocabulary (a store's services are held as bits over it). Setting a service
 * as it is stored writes nothing. A service stores still have is not removed (ServiceInUseError).
 */
@Injectable()
export class ServicesService {
  constructor(
    @InjectRepository(Service) private readonly services: Repository<Service>,
    private readonly catalog: StoreCatalog,
  ) {}

  /** Every service, by slug. */
  list(): Promise<Service[]> {
    return this.services.find({ order: { slug: 'ASC' } });
  }

  async get(slug: string): Promise<Service> {
    const service = await this.services.findOneBy({ slug });
    if (!service) throw new ServiceNotFoundError(slug);
    return service;
  }

  /** The slugs of every service: what a store's list is checked against. */
  async slugs(): Promise<Set<string>> {
    return new Set((await this.services.find({ select: { slug: true } })).map((service) => service.slug));
  }

  /** Sets the service `slug`; `created` tells whether there was none. */
  async set(slug: string, fields: ServiceFields): Promise<{ service: Service; created: boolean }> {
    const row = { slug, label: fields.label, description: fields.description ?? null };
    const { value } = await this.catalog.write('admin', async (write) => {
      const current = await write.manager.findOneBy(Service, { slug });
      if (current && current.label === row.label && current.description === row.description) return { service: current, created: false };
      await write.setService(row);
      return { service: await write.manager.findOneByOrFail(Service, { slug }), created: !current };
    });
    return value;
  }

  /** Deletes the service `slug`: ServiceNotFoundError, or ServiceInUseError while stores have it. */
  async remove(slug: string): Promise<void> {
    const { value } = await this.catalog.write('admin', (write) => write.removeService(slug));
    if (!value) throw new ServiceNotFoundError(slug);
  }
}
