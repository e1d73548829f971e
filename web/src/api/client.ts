/**
 * The one way the UI talks to the server: same-origin fetch with the session cookie. A 401 is
 * answered once by refreshing the session (the HttpOnly refresh cookie) and retrying; errors are
 * ApiError with the server's {"error":{message,type,code,param}}.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface RequestOptions {
  method?: string;
  /** A JSON body (objects) or a raw body (FormData, Blob, string). */
  body?: unknown;
  query?: Record<string, string | number | boolean | null | undefined | readonly string[]>;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Do not try a refresh on 401 (login, refresh itself). */
  noRefresh?: boolean;
}

/** Called when the session is gone for good (refresh refused): the app shows the login page. */
let onSessionLost: () => void = () => {};
export function setSessionLostHandler(handler: () => void): void {
  onSessionLost = handler;
}

export function withQuery(path: string, query: RequestOptions['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) for (const v of value) params.append(key, String(v));
    else params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

/** The server's error body as an ApiError (any body: a proxy's HTML page too). */
export async function errorOf(response: Response): Promise<ApiError> {
  let message = `${response.status} ${response.statusText}`;
  let code: string | null = null;
  let param: string | null = null;
  try {
    const body = (await response.json()) as { error?: { message?: string; code?: string | null; param?: string | null } };
    if (body.error?.message) message = body.error.message;
    code = body.error?.code ?? null;
    param = body.error?.param ?? null;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(response.status, message, code, param);
}

let refreshing: Promise<boolean> | null = null;

/** Renews the access cookie from the refresh cookie; one at a time for all callers. */
export function refreshSession(): Promise<boolean> {
  refreshing ??= fetch('/v1/auth/refresh', { method: 'POST', credentials: 'same-origin' })
    .then((r) => r.ok)
    .catch(() => false)
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

/** A fetch with the app's conventions; answers the Response (for streams and downloads). */
export async function send(path: string, options: RequestOptions = {}): Promise<Response> {
  const init = (): RequestInit => {
    const headers: Record<string, string> = { ...options.headers };
    let body: BodyInit | undefined;
    if (options.body instanceof FormData || options.body instanceof Blob || typeof options.body === 'string') body = options.body;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    return { method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers, body, credentials: 'same-origin', signal: options.signal };
  };
  const url = withQuery(path, options.query);
  let response = await fetch(url, init());
  if (response.status === 401 && !options.noRefresh) {
    if (await refreshSession()) response = await fetch(url, init());
    if (response.status === 401) onSessionLost();
  }
  if (!response.ok) throw await errorOf(response);
  return response;
}

/** A JSON request; answers the parsed body. */
export async function api<T = unknown>(path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(path, options);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}
