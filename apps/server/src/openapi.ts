import { z } from 'zod';

/**
 * One route as the OpenAPI document describes it. Each route file lists its
 * routes beside the code that registers them, naming the very zod schemas
 * the handlers validate with: the document is generated from those, never
 * written a second time.
 */
export interface RouteDoc {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Hono's form: `/api/schedules/:id/runs`. */
  path: string;
  summary: string;
  /** Longer text: what the schemas cannot say (a refinement, an order, a default). */
  description?: string;
  /** The schema of each `:name` in the path. */
  params?: Record<string, z.ZodType>;
  /** The query string as one object schema, each key a parameter. */
  query?: z.ZodObject;
  /** The JSON body's schema. */
  body?: z.ZodType;
  /** Refusals besides 401 and 500 (400 invalid, 404, 409, 413). */
  refusals?: ReadonlyArray<400 | 404 | 409 | 413>;
  /** The status of a success (default 200). */
  success?: 200 | 201 | 204;
  /** What a success answers with, when not JSON. */
  produces?: ReadonlyArray<string>;
  /** Served without the bearer token (the console's static files). */
  public?: boolean;
}

/** What every refusal answers with: `{ error, message }`, and `issues` when there are several. */
export const refusalSchema = z
  .object({
    error: z.string().describe('a short code: invalid, too_large, unauthorized, not_found, conflict, …'),
    message: z.string().describe('what was refused and why, in a sentence'),
    issues: z.array(z.string()).optional().describe('every problem, when there are several'),
  })
  .meta({ title: 'Refusal' });

const REFUSAL_TEXT: Record<number, string> = {
  400: 'the input is refused (`invalid`, or `cadence` for a schedule sentence the grammar does not read)',
  401: 'no bearer token, or not this server’s (`unauthorized`)',
  404: 'nothing by that id or name (`not_found`)',
  409: 'the state forbids it (`refused`, `conflict`, `hash_mismatch`, `approval_required`, `builtin`, …)',
  413: 'the body is too large (`too_large`)',
  500: 'a mistake of the server’s, never a stack trace (`internal`)',
};

/** A zod schema as JSON Schema for a request: its input side (defaults make fields optional). */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...json } = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return json;
}

/** `/api/turns/:id/feedback` → `/api/turns/{id}/feedback`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function operation(route: RouteDoc) {
  const parameters: Array<Record<string, unknown>> = [];
  for (const [name, schema] of Object.entries(route.params ?? {}))
    parameters.push({ name, in: 'path', required: true, schema: jsonSchemaOf(schema) });
  if (route.query) {
    const query = jsonSchemaOf(route.query) as {
      properties?: Record<string, unknown>;
      required?: string[];
    };
    for (const [name, schema] of Object.entries(query.properties ?? {}))
      parameters.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
  }
  const produces = route.produces ?? ['application/json'];
  const responses: Record<string, unknown> = {
    [String(route.success ?? 200)]: {
      description: 'done',
      ...(route.success === 204
        ? {}
        : { content: Object.fromEntries(produces.map((type) => [type, { schema: {} }])) }),
    },
  };
  const refusal = { 'application/json': { schema: { $ref: '#/components/schemas/Refusal' } } };
  for (const status of [...(route.refusals ?? []), ...(route.public ? [] : [401]), 500].sort((a, b) => a - b))
    responses[String(status)] = { description: REFUSAL_TEXT[status], content: refusal };
  return {
    operationId: `${route.method}${openApiPath(route.path)
      .replace(/[{}]/g, '')
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((part) => part[0]!.toUpperCase() + part.slice(1))
      .join('')}`,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.public ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: jsonSchemaOf(route.body) } },
          },
        }
      : {}),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of the routes given: paths, path and query
 * parameters and bodies as JSON Schema made from the routes' own zod schemas
 * (`z.toJSONSchema`, input side), the bearer token as the security scheme of
 * every route but the console's files, and the refusal shape.
 *
 * @example
 * const document = openApiDocument([...coreRouteDocs, ...memoryRouteDocs], { version: '0.1.0' });
 */
export function openApiDocument(routes: readonly RouteDoc[], info: { version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method]: operation(route) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Metnos server API',
      version: info.version,
      description:
        'The HTTP API of `metnos serve`. Every route needs the bearer token in <config dir>/server.token; refusals are `{ error, message }`.',
    },
    servers: [{ url: 'http://127.0.0.1:8787' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'the token `metnos init` wrote to <config dir>/server.token',
        },
      },
      schemas: { Refusal: jsonSchemaOf(refusalSchema) },
    },
  };
}
