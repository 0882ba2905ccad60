// The framework floor: the smallest server of each layer of the service's stack answering
// GET /plants?limit=20 with the same 20-plant JSON body as the service, no token look-up, and
// from memory except in the -db floor. FLOOR picks the layer: `http` (node:http), `express`
// (Express 5, as Nest's platform-express sets it up), `nest` (NestJS 12 over Express, one
// controller), `nest-passport` (the same plus a global @nestjs/passport bearer guard that
// accepts one fixed token), `nest-passport-db` (the same, the page read from MySQL with the
// service's SQL on a plain mysql2 pool: one query per request). ADAPTER=fastify runs the
// NestJS floors on @nestjs/platform-fastify instead of Express (a devDependency, for this
// comparison only: the service itself is built on platform-express). Used by bench/floor.mjs.
import 'reflect-metadata';
import { createServer } from 'node:http';
import { plantRows } from './plants.mjs';

/** A page of plants as the service answers it: name, and tag when there is one. */
const toBody = ({ name, tag }) => (tag === null ? { name } : { name, tag });
const PAGE = plantRows(0, 20).map(([, , name, tag]) => toBody({ name, tag }));
const BODY = JSON.stringify(PAGE);
const FLOOR_TOKEN = process.env.FLOOR_TOKEN;
const port = Number(process.env.PORT);
const host = process.env.HOST ?? '127.0.0.1';

switch (process.env.FLOOR) {
  case 'http': {
    createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(BODY) });
      res.end(BODY);
    }).listen(port, host);
    break;
  }
  case 'express': {
    const { default: express } = await import('express');
    const app = express();
    app.get('/plants', (req, res) => res.json(PAGE));
    app.get('/health/ready', (req, res) => res.json({ status: 'ok' }));
    app.listen(port, host);
    break;
  }
  case 'nest':
  case 'nest-passport':
  case 'nest-passport-db': {
    const { Controller, Get, Injectable, Module } = await import('@nestjs/common');
    const { APP_GUARD, NestFactory } = await import('@nestjs/core');
    const pool =
      process.env.FLOOR === 'nest-passport-db'
        ? (await import('mysql2/promise')).default.createPool({ uri: process.env.DATABASE_URL, connectionLimit: 10 })
        : undefined;
    const SQL = 'SELECT CAST(id AS CHAR) AS id_text, name, tag FROM plants WHERE team = ? AND id > ? ORDER BY id LIMIT ?';
    class PlantsController {
      async list() {
        if (!pool) return PAGE;
        const [rows] = await pool.execute(SQL, ['team0', '0', '21']);
        return rows.slice(0, 20).map(toBody);
      }
      ready() {
        return { status: 'ok' };
      }
    }
    Get('plants')(PlantsController.prototype, 'list', Object.getOwnPropertyDescriptor(PlantsController.prototype, 'list'));
    Get('health/ready')(PlantsController.prototype, 'ready', Object.getOwnPropertyDescriptor(PlantsController.prototype, 'ready'));
    Controller()(PlantsController);
    const providers = [];
    if (process.env.FLOOR !== 'nest') {
      const { AuthGuard, PassportStrategy } = await import('@nestjs/passport');
      const { Strategy } = await import('passport-http-bearer');
      class FixedTokenStrategy extends PassportStrategy(Strategy, 'bearer') {
        validate(token) {
          return token === FLOOR_TOKEN ? { team: 'team0' } : false;
        }
      }
      Injectable()(FixedTokenStrategy);
      class Guard extends AuthGuard('bearer') {
        canActivate(context) {
          return context.switchToHttp().getRequest().url === '/health/ready' || super.canActivate(context);
        }
      }
      Injectable()(Guard);
      providers.push(FixedTokenStrategy, { provide: APP_GUARD, useClass: Guard });
    }
    class FloorModule {}
    Module({ controllers: [PlantsController], providers })(FloorModule);
    const options = { logger: false, bodyParser: false };
    let app;
    if (process.env.ADAPTER === 'fastify') {
      const { FastifyAdapter } = await import('@nestjs/platform-fastify');
      app = await NestFactory.create(FloorModule, new FastifyAdapter(), options);
    } else {
      app = await NestFactory.create(FloorModule, options);
    }
    await app.listen(port, host);
    break;
  }
  default:
    throw new Error(`FLOOR must be http, express, nest, nest-passport or nest-passport-db, not ${process.env.FLOOR}`);
}
