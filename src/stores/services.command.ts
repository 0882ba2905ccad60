import { InvalidArgumentError, type Command } from 'commander';
import { CommandFailure, say, type WithApp } from '../common/command-line.js';
import { SERVICE_SLUG, SERVICE_SLUG_RULE } from '../shared/services.js';
import { ServiceInUseError } from './store-catalog.js';
import { ServiceNotFoundError, ServicesService } from './services.service.js';

/** The checks of the admin API's ServiceRequest and path, worded for arguments and options. */
function slug(value: string): string {
  if (!SERVICE_SLUG.test(value)) throw new InvalidArgumentError(SERVICE_SLUG_RULE);
  return value;
}

function text(max: number, blank: boolean) {
  return (value: string): string => {
    if ((!blank && !/\S/u.test(value)) || [...value].length > max || !value.isWellFormed())
      throw new InvalidArgumentError(blank ? `must be at most ${max} characters` : `must be 1 to ${max} characters, not only white space`);
    return value;
  };
}

/** `plant-store services …`: the chain's services from a shell, as GET/PUT/DELETE /admin/services. */
export function servicesCommand(program: Command, withApp: WithApp): void {
  const services = program.command('services').description("The chain's services: what a store's services and the search's filter name.");

  services
    .command('list')
    .description('One service a line, by slug: slug, label, description (- for none).')
    .action(() =>
      withApp(async (app) => {
        for (const service of await app.get(ServicesService).list())
          process.stdout.write(`${[service.slug, service.label, service.description ?? '-'].join('\t')}\n`);
      }),
    );

  services
    .command('put')
    .description("Create or replace a service; every instance's search follows it within STORE_INDEX_REFRESH_MS.")
    .argument('<slug>', 'a lowercase slug, e.g. curbside_pickup', slug)
    .requiredOption('--label <label>', 'what customers read, e.g. "Curbside pickup"', text(100, false))
    .option('--description <text>', 'more words, at most 500 characters', text(500, true))
    .action((name: string, options: { label: string; description?: string }) =>
      withApp(async (app) => {
        const { created } = await app.get(ServicesService).set(name, options);
        say(`service ${name} ${created ? 'created' : 'set'}`);
      }),
    );

  services
    .command('delete')
    .description('Delete a service; refused while stores still have it.')
    .argument('<slug>', 'its slug', slug)
    .action((name: string) =>
      withApp(async (app) => {
        try {
          await app.get(ServicesService).remove(name);
        } catch (error) {
          if (error instanceof ServiceNotFoundError || error instanceof ServiceInUseError) throw new CommandFailure(error.message, 1);
          throw error;
        }
        say(`service ${name} deleted`);
      }),
    );
}
