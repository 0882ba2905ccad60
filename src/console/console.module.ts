import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Module } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { ServeStaticModule } from '@nestjs/serve-static';
import { serverConfig } from '../common/server.config.js';

/**
 * The console's built files (`npm run build` bundles src/console/web with esbuild into them).
 * From the project root, so that the same path holds for dist/console/ and, under Jest, src/console/.
 */
export const CONSOLE_FILES = fileURLToPath(new URL('../../dist/console/public/', import.meta.url));

/** Whether /console is served: switched on (CONSOLE_ENABLED) and built. The start-up summary says so too. */
export const consoleServed = (enabled: boolean): boolean => enabled && existsSync(CONSOLE_FILES);

/**
 * The operator's console at /console: static files only, under the same helmet CSP as the
 * API docs' pages (app.setup.ts, PAGE_HEADERS) and `Cache-Control: no-store` as every other answer. It is a client of the /admin API and
 * holds no route of its own; its requests carry the admin token like any other client's.
 * CONSOLE_ENABLED=false (or a build without the bundle) leaves /console to the 404 of any unknown path.
 * (In a Nest testing module the files are not served: serve-static picks its loader when the module
 * is compiled, before the app has an HTTP adapter. The specs start the built service for them.)
 */
@Module({
  imports: [
    ServeStaticModule.forRootAsync({
      inject: [serverConfig.KEY],
      useFactory: (server: ConfigType<typeof serverConfig>) =>
        consoleServed(server.CONSOLE_ENABLED)
          ? [
              {
                rootPath: CONSOLE_FILES,
                serveRoot: '/console',
                // index.html for /console and /console/ only; an unknown file is the API's 404, not the page.
                renderPath: '/',
                serveStaticOptions: { cacheControl: false, etag: false, lastModified: false, index: false, redirect: false, fallthrough: true },
              },
            ]
          : [],
    }),
  ],
})
export class ConsoleModule {}
