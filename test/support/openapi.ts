/**
 * The server's OpenAPI document for tests. Component schemas are `$ref`s; tests that look inside
 * a body's fields read the document with every `$ref` replaced by what it names
 * (@apidevtools/swagger-parser's `dereference`).
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { call } from './app.js';

/** GET /openapi.json as sent (throws unless 200). */
export async function openapiDocument(url: string): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await call(`${url}/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
  return res.json;
}

/** The document with its `$ref`s resolved in place: schemas read as if written inline. */
export async function dereferencedOpenapi(url: string): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return (await SwaggerParser.dereference((await openapiDocument(url)) as NonNullable<Parameters<SwaggerParser.ApiCallback>[1]>)) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}
