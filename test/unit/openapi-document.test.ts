/** The last step of the OpenAPI document (src/api/openapi/document.ts), on a small document. */
import { describe, expect, it } from 'vitest';
import { finishDocument, type OpenApiDocument } from '../../src/api/openapi/document.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description = 'ok') => ({ description, content: { 'application/json': { schema } } });

const DOC: OpenApiDocument = {
  openapi: '3.0.3',
  components: {
    schemas: {
      Thing: { type: 'object', properties: { id: { type: 'string' }, part: ref('Part') } },
      Part: { type: 'object', properties: { state: { type: 'string', enum: ['on', 'off'], nullable: true }, mode: { type: 'string', enum: ['a', null], nullable: true } } },
      CreateThingRequestInput: { type: 'object', properties: { name: { type: 'string' } } },
      CreateThingRequest: { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false },
      Unused: { type: 'string' },
      ThingEvent: { type: 'object', properties: { part: ref('Part') } },
      ErrorInput: { type: 'object' },
      Error: { type: 'object', properties: { error: { type: 'object' } } },
    },
  },
  paths: {
    '/things': {
      post: { requestBody: { content: { 'application/json': { schema: ref('CreateThingRequestInput') } } }, responses: { 201: json(ref('Thing')), 409: json({ description: 'conflict', allOf: [ref('Error')] }, 'conflict') } },
    },
    '/things/{*}': { get: { parameters: [{ in: 'path', name: '*', required: true, schema: { type: 'string' } }], responses: { 200: json(ref('Thing')) } } },
    '/ping': { get: { responses: { 200: json({ type: 'string' }) } } },
  },
};

const finished = finishDocument(DOC, {
  operations: {
    'POST /things': { id: 'createThing', access: 'key' },
    'GET /things/{*}': { id: 'getThing', wildcard: 'thing_id', stream: 'ThingEvent' },
    'GET /ping': { id: 'ping', access: 'public' },
  },
  maintenanceExempt: (path) => path === '/ping',
  servers: [{ url: '/' }],
});
const paths = finished.paths!;

describe('finishDocument', () => {
  it('sets operation ids, security and servers, and names the wildcard', () => {
    expect(paths['/things']!.post!.operationId).toBe('createThing');
    expect(paths['/things']!.post!.security).toEqual([{ apiKey: [] }, { bearer: [] }, { session: [] }]);
    expect(paths['/ping']!.get!.security).toEqual([]);
    expect(finished.servers).toEqual([{ url: '/' }]);
    expect(Object.keys(paths)).toEqual(['/things', '/things/{thing_id}', '/ping']);
    expect(paths['/things/{thing_id}']!.get!.parameters).toEqual([{ in: 'path', name: 'thing_id', required: true, schema: { type: 'string' } }]);
    expect(paths['/things/{thing_id}']!.get!.security).toEqual([{ bearer: [] }, { session: [] }]);
  });

  it('adds the error responses each operation can give, keeping those the route names', () => {
    const statuses = (path: string, method: string) => Object.keys(paths[path]![method]!.responses as object).sort();
    expect(statuses('/ping', 'get')).toEqual(['200', '400', '500', 'default']);
    expect(statuses('/things', 'post')).toEqual(['201', '400', '401', '409', '500', '503', 'default']);
    expect(statuses('/things/{thing_id}', 'get')).toEqual(['200', '400', '401', '404', '500', '503', 'default']);
    const responses = paths['/things']!.post!.responses as Record<string, { description: string; content: Record<string, { schema: unknown }> }>;
    // The route's own 409: its description, its schema written as the plain $ref.
    expect(responses['409']).toEqual(json(ref('Error'), 'conflict'));
    expect(responses['401']!.content['application/json']!.schema).toEqual(ref('Error'));
    expect(responses['401']!.description).toContain('invalid_api_key');
  });

  it('adds the stream event schema to the 200 answer of an operation that streams, as text/event-stream', () => {
    const ok = (paths['/things/{thing_id}']!.get!.responses as Record<string, { content: Record<string, { schema: unknown }> }>)['200']!;
    expect(ok.content).toEqual({ 'application/json': { schema: ref('Thing') }, 'text/event-stream': { schema: ref('ThingEvent') } });
    expect(Object.keys((paths['/ping']!.get!.responses as Record<string, { content: object }>)['200']!.content)).toEqual(['application/json']);
  });

  it('puts null in the values of a nullable enum (OpenAPI 3.0.3), once', () => {
    expect(finished.components!.schemas!.Part).toEqual({ type: 'object', properties: { state: { type: 'string', enum: ['on', 'off', null], nullable: true }, mode: { type: 'string', enum: ['a', null], nullable: true } } });
  });

  it('keeps only referenced schemas, and names request schemas without Input', () => {
    expect(Object.keys(finished.components!.schemas!)).toEqual(['CreateThingRequest', 'Error', 'Part', 'Thing', 'ThingEvent']);
    expect(finished.components!.schemas!.CreateThingRequest).toEqual({ type: 'object', properties: { name: { type: 'string' } } });
    expect((paths['/things']!.post!.requestBody as { content: Record<string, { schema: unknown }> }).content['application/json']!.schema).toEqual(ref('CreateThingRequest'));
  });
});
