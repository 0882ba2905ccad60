import { readFile } from 'node:fs/promises';
import type { OpenAPIObject } from '@nestjs/swagger';
import responseValidator from 'openapi-response-validator';
import type request from 'supertest';
import { carriesProblems } from '../../src/common/error-body.js';

type Json = Record<string, unknown>;
type Header = { required?: boolean; $ref?: string };
type Operation = { responses: Record<string, { content?: Record<string, { schema: Json }>; headers?: Record<string, Header> }> };

// A CommonJS module with `exports.default`: under native ES modules the class is one level down.
const OpenAPIResponseValidator = responseValidator.default;
type OpenAPIResponseValidator = InstanceType<typeof OpenAPIResponseValidator>;

let cached: Promise<OpenAPIObject> | undefined;

/**
 * The document the service publishes at /docs-json: the one the built service makes in Nest's
 * preview mode (scripts/openapi-document.mjs, as client:generate and docs:lint use it), written
 * by the e2e specs' global set-up (test/support/global-setup.js) right after it built the source
 * under test.
 */
export function openApiDocument(): Promise<OpenAPIObject> {
  cached ??= (async () => {
    const file = process.env.PLANT_STORE_OPENAPI_FILE;
    if (!file)
      throw new Error(
        'PLANT_STORE_OPENAPI_FILE is not set: test/support/global-setup.js writes the document (run the specs through a jest config that uses it)',
      );
    return JSON.parse(await readFile(file, 'utf8')) as OpenAPIObject;
  })();
  return cached;
}

/**
 * The document as a response must satisfy it: Nest's schemas leave `additionalProperties`
 * open; the service's bodies are exactly what the document lists, so a field it does not
 * describe must fail the check as well. (No response schema has a write-only property: plant
 * responses are PlantResponse, without the request's `id`; test/openapi.e2e-spec.ts checks it.)
 */
function asResponses(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(asResponses);
  if (!schema || typeof schema !== 'object') return schema;
  const copy: Json = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, asResponses(v)]));
  if (copy.type === 'object' && copy.properties) copy.additionalProperties ??= false;
  return copy;
}

export interface ObservedResponse {
  method: string;
  /** Absolute URL or path of the request. */
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, when the body was JSON. */
  body: unknown;
  /** The raw body text. */
  text: string | undefined;
}

export interface ResponseChecker {
  /** What is wrong with the response, measured against the document; undefined when it conforms. */
  problem(response: ObservedResponse): string | undefined;
}

const ERROR_SCHEMA_REF = { $ref: '#/components/schemas/Error' };

/**
 * How a response is judged:
 * - A request that matches an operation (method + path template): its status must be one
 *   of the operation's documented responses; a documented body is JSON and satisfies its
 *   schema (undocumented fields fail); a response documented without content has no body.
 *   HEAD is judged as GET, without a body.
 * - A request that no operation describes (unknown route → 404, other method → 405, a path
 *   Express cannot decode → 400): it must be a 4xx with the Error body, since the contract
 *   gives every error from any layer that body.
 * - The documentation itself (/docs, /docs-json, /docs-yaml) is not described by itself: skipped.
 * - A CORS preflight (OPTIONS answered 204 with Access-Control-Allow-Methods, when CORS_ORIGINS
 *   allows the origin) is the CORS layer's answer, before any operation: skipped.
 * - Every error body carries its own status in `error`; an /admin route's may carry `problems`
 *   beside it (AdminError), no other field.
 * - Headers: a response carries every header its documented response marks required, and
 *   none of the contract's headers (components.headers) that its documented response lacks.
 */
export function responseChecker(document: OpenAPIObject): ResponseChecker {
  const doc = asResponses(document) as OpenAPIObject;
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    // Literal paths win over templated ones, as in any router.
    literal: !template.includes('{'),
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
  }));
  templates.sort((a, b) => Number(b.literal) - Number(a.literal));
  const validators = new Map<string, OpenAPIResponseValidator>();
  const validatorFor = (key: string, responses: Operation['responses']) => {
    let validator = validators.get(key);
    if (!validator) {
      validator = new OpenAPIResponseValidator({ responses: responses as never, components: doc.components as never });
      validators.set(key, validator);
    }
    return validator;
  };
  const errorResponses = { default: { description: 'Error', content: { 'application/json': { schema: ERROR_SCHEMA_REF } } } };
  const adminErrorResponses = {
    default: { description: 'Admin error', content: { 'application/json': { schema: { $ref: '#/components/schemas/AdminError' } } } },
  };
  const contractHeaders: Record<string, Header> = { ...(doc.components?.headers as Record<string, Header>) };
  const definition = (header: Header) => (header.$ref ? contractHeaders[header.$ref.replace('#/components/headers/', '')] : header);

  return {
    problem(res) {
      const method = res.method.toLowerCase();
      const path = new URL(res.url, 'http://localhost').pathname;
      const where = `${res.method.toUpperCase()} ${path} → ${res.status}`;
      if (/^\/docs(-json|-yaml)?\/?$|^\/docs\//.test(path)) return undefined;
      if (method === 'options' && res.status === 204 && res.headers['access-control-allow-methods'] !== undefined) return undefined;
      const contentType = String(res.headers['content-type'] ?? '');
      const isJson = contentType.startsWith('application/json');
      // The body, copied: the validator fills in schema defaults on what it is given.
      const body = res.body === undefined ? undefined : structuredClone(res.body);
      const errorBodyProblem = () => {
        if (res.status < 400) return undefined;
        if (!isJson) return `${where}: an error must be an application/json Error body, got ${contentType || 'no content type'}`;
        // The admin routes may add their problems as data (AdminError); every other error is exactly the Error body.
        const admin = carriesProblems(path);
        const invalid = validatorFor(admin ? 'AdminError' : 'Error', admin ? adminErrorResponses : errorResponses).validateResponse(res.status, body);
        if (invalid) return `${where}: not the ${admin ? 'AdminError' : 'Error'} body: ${JSON.stringify(invalid.errors)} in ${res.text}`;
        if ((body as { error?: unknown }).error !== res.status) return `${where}: the Error body's error must be ${res.status}: ${res.text}`;
        return undefined;
      };

      const present = new Set(
        Object.entries(res.headers)
          .filter(([, value]) => value !== undefined)
          .map(([name]) => name.toLowerCase()),
      );
      const headersProblem = (headers: Record<string, Header>) => {
        const documentedNames = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
        const missing = Object.entries(headers)
          .filter(([name, header]) => definition(header)?.required && !present.has(name.toLowerCase()))
          .map(([name]) => name);
        if (missing.length) return `required header ${missing.join(', ')} missing`;
        const undocumented = Object.keys(contractHeaders).filter((name) => present.has(name.toLowerCase()) && !documentedNames.has(name.toLowerCase()));
        if (undocumented.length) return `header ${undocumented.join(', ')} sent but not documented for this response`;
        return undefined;
      };

      const match = templates.find((t) => t.pattern.test(path));
      const lookup = method === 'head' ? 'get' : method;
      const operation = match ? ((doc.paths[match.template] as Record<string, Operation | undefined>)[lookup] ?? undefined) : undefined;
      if (!match || !operation) {
        if (res.status < 400 || res.status >= 500)
          return `${where}: no operation in the document describes this request, so only a 4xx Error body may answer it`;
        return errorBodyProblem();
      }
      const documented = operation.responses[String(res.status)] ?? operation.responses.default;
      if (!documented)
        return `${where}: status not documented for ${lookup.toUpperCase()} ${match.template} (documented: ${Object.keys(operation.responses).join(', ')})`;
      const headerProblem = headersProblem(documented.headers ?? {});
      if (headerProblem) return `${where}: ${headerProblem}`;
      if (method === 'head') return undefined;
      if (!documented.content) {
        if (res.text) return `${where}: documented without a body, but the response has one: ${res.text}`;
        return undefined;
      }
      const mediaType = contentType.split(';')[0].trim();
      // A body of another media type (the store export's text/csv) must be the documented one; its content is the test's to check.
      if (!isJson)
        return documented.content[mediaType]
          ? undefined
          : `${where}: documented as ${Object.keys(documented.content).join(', ')}, got ${contentType || 'no content type'}`;
      const invalid = validatorFor(`${lookup} ${match.template}`, operation.responses).validateResponse(res.status, body);
      if (invalid) return `${where}: body does not satisfy the document: ${JSON.stringify(invalid.errors)} in ${res.text}`;
      return errorBodyProblem();
    },
  };
}

type Agent = ReturnType<typeof request>;
type Test = ReturnType<Agent['get']>;

/**
 * Wraps a supertest agent so that every response it receives is checked against the
 * service's OpenAPI document: a response the document does not describe fails the test
 * that awaited it, as a failed `.expect()` would.
 */
export function conformingAgent(agent: Agent, document: Promise<OpenAPIObject>): Agent {
  const checker = document.then(responseChecker);
  return new Proxy(agent, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const test = (value as (...a: unknown[]) => Test).apply(target, args);
        const end = test.end.bind(test);
        test.end = (callback) =>
          end((error, res) => {
            if (!res) return callback?.(error, res);
            checker
              .then((c) => c.problem({ method: test.method, url: test.url, status: res.status, headers: res.headers, body: res.body, text: res.text }))
              .then(
                (problem) => callback?.(error ?? (problem ? new Error(`OpenAPI conformance: ${problem}`) : null), res),
                (e: unknown) => callback?.(e, res),
              );
          });
        return test;
      };
    },
  });
}
