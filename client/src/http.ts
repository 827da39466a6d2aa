import { ProblemError } from "./problem.ts";

export type ClientOptions = {
  baseUrl: string;
  /** Retries of a request that may be repeated safely: network errors, 5xx and 429 (default 2). */
  maxRetries?: number;
  fetch?: typeof fetch;
};

type RequestOptions = {
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  /** Whether repeating the request cannot do it twice (a GET, a DELETE, a POST with an idempotency-key, a stop). */
  repeatable: boolean;
  signal?: AbortSignal;
};

// The longest wait honoured between two tries; a longer Retry-After is the caller's to wait out.
const MAX_WAIT_MS = 60_000;
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", abort, { once: true });
  });

/** The transport both clients share: JSON in and out, a bearer credential, typed problems and safe retries. */
export class Http {
  readonly baseUrl: string;
  readonly credential: string | undefined;
  readonly maxRetries: number;
  readonly fetch: typeof fetch;

  constructor(options: ClientOptions, credential?: string) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.credential = credential;
    this.maxRetries = options.maxRetries ?? 2;
    const given = options.fetch;
    this.fetch = given ? (input, init) => given(input, init) : (input, init) => fetch(input, init);
  }

  url(path: string, query: RequestOptions["query"] = {}): string {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
    const text = search.toString();
    return `${this.baseUrl}${path}${text ? `?${text}` : ""}`;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.credential ? { authorization: `Bearer ${this.credential}` } : {}), ...extra };
  }

  /** The answer's body (undefined for 204) and headers; a problem answer throws ProblemError. */
  async request<T>(method: string, path: string, options: RequestOptions): Promise<{ body: T; headers: Headers }> {
    const init: RequestInit = {
      method,
      headers: this.headers({ ...(options.body !== undefined ? { "content-type": "application/json" } : {}), ...options.headers }),
      body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
      signal: options.signal,
    };
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetch(this.url(path, options.query), init);
      } catch (error) {
        // The request may have reached the server: only a repeatable one is sent again.
        if (options.signal?.aborted || !options.repeatable || attempt >= this.maxRetries) throw error;
        await sleep(backoff(attempt), options.signal);
        continue;
      }
      if (response.ok) {
        const text = response.status === 204 ? "" : await response.text();
        return { body: (text ? JSON.parse(text) : undefined) as T, headers: response.headers };
      }
      const problem = await ProblemError.from(response);
      // A 429 was not acted on, so it may always be tried again; a 5xx only when repeating is safe.
      const again = problem.status === 429 || (problem.status >= 500 && options.repeatable);
      if (!again || attempt >= this.maxRetries) throw problem;
      await sleep(problem.retryAfter !== null ? Math.min(problem.retryAfter * 1000, MAX_WAIT_MS) : backoff(attempt), options.signal);
    }
  }
}

/** Exponential with jitter: about 0.5 s, 1 s, 2 s, … up to 30 s. */
export const backoff = (attempt: number) => Math.min(30_000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);
