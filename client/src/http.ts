import { rateLimitOf, type WithResponse } from "./answer.ts";
import { ConnectionError, TimeoutError } from "./errors.ts";
import { ProblemError } from "./problem.ts";

export type ClientOptions = {
  baseUrl: string;
  /** Retries of a request that may be repeated safely: network errors, timeouts, 5xx and 429 (default 2). */
  maxRetries?: number;
  /** Milliseconds a try waits for its whole answer (default 60 s); every call may set its own. */
  timeout?: number;
  fetch?: typeof fetch;
};

/** What every call takes: a signal that cancels it, and a timeout (ms) of its own instead of the client's. */
export type CallOptions = { signal?: AbortSignal; timeout?: number };

/** Only the call options are the transport's: a method's own options (archived, limit, …) are not. */
export const callOptions = (options: CallOptions = {}): CallOptions => ({ signal: options.signal, timeout: options.timeout });

type RequestOptions = CallOptions & {
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  /** Whether repeating the request cannot do it twice (a GET, a DELETE, a POST with an idempotency-key, a stop). */
  repeatable: boolean;
};

const DEFAULT_TIMEOUT_MS = 60_000;
// The longest wait honoured between two tries; a longer Retry-After is the caller's to wait out.
const MAX_WAIT_MS = 60_000;
// setTimeout's own limit: a longer delay would fire at once.
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

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

/** Exponential with jitter: about 0.5 s, 1 s, 2 s, … up to 30 s. */
export const backoff = (attempt: number) => Math.min(30_000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);

/** How long to wait before trying again after a 429 or 5xx: its Retry-After up to a minute, else backoff. */
export const retryDelay = (problem: ProblemError, attempt: number) => (problem.retryAfter !== null ? Math.min(problem.retryAfter * 1000, MAX_WAIT_MS) : backoff(attempt));

export function checkTimeout(ms: number): number {
  if (!(ms > 0 && ms <= MAX_TIMEOUT_MS)) throw new RangeError(`timeout must be a number of milliseconds between 1 and ${MAX_TIMEOUT_MS}, not ${ms}`);
  return ms;
}

/**
 * One try's clock: its signal aborts when the caller's does, or when `ms` pass without a restart
 * (then with a TimeoutError). close() ends the try, and with it any connection still open.
 */
export class Deadline {
  readonly signal: AbortSignal;
  readonly ms: number;
  readonly caller: AbortSignal | undefined;
  readonly #clock = new AbortController();
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(ms: number, caller?: AbortSignal) {
    this.ms = ms;
    this.caller = caller;
    this.signal = caller ? AbortSignal.any([caller, this.#clock.signal]) : this.#clock.signal;
    this.restart();
  }

  restart(): void {
    this.pause();
    this.#timer = setTimeout(() => this.#clock.abort(new TimeoutError(this.ms)), this.ms);
  }

  pause(): void {
    clearTimeout(this.#timer);
  }

  close(): void {
    this.pause();
    this.#clock.abort();
  }

  /** What a failed try means: the caller's own reason when they cancelled, a TimeoutError when time ran out, else a ConnectionError keeping the cause. */
  failure(error: unknown, url: string): unknown {
    if (this.caller?.aborted) return this.caller.reason;
    if (this.#clock.signal.reason instanceof TimeoutError) return this.#clock.signal.reason;
    return new ConnectionError(`${url}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** The transport both clients share: JSON in and out, a bearer credential, typed problems and errors, timeouts and safe retries. */
export class Http {
  readonly baseUrl: string;
  readonly credential: string | undefined;
  readonly maxRetries: number;
  readonly timeout: number;
  readonly fetch: typeof fetch;

  constructor(options: ClientOptions, credential?: string) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.credential = credential;
    this.maxRetries = options.maxRetries ?? 2;
    this.timeout = checkTimeout(options.timeout ?? DEFAULT_TIMEOUT_MS);
    const given = options.fetch;
    this.fetch = given ? (input, init) => given(input, init) : (input, init) => fetch(input, init);
  }

  /** A call's timeout: its own, else the client's. */
  timeoutOf(options: CallOptions): number {
    return options.timeout === undefined ? this.timeout : checkTimeout(options.timeout);
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

  /**
   * The answer's parsed body (undefined for 204) with the answer. A problem answer throws ProblemError;
   * no answer in time throws TimeoutError, and no answer at all ConnectionError (once retries are spent).
   */
  async request<T>(method: string, path: string, options: RequestOptions): Promise<WithResponse<T>> {
    const timeout = this.timeoutOf(options);
    const url = this.url(path, options.query);
    const init: RequestInit = {
      method,
      headers: this.headers({ ...(options.body !== undefined ? { "content-type": "application/json" } : {}), ...options.headers }),
      body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    };
    for (let attempt = 0; ; attempt++) {
      const deadline = new Deadline(timeout, options.signal);
      let response: Response;
      let text: string;
      try {
        response = await this.fetch(url, { ...init, signal: deadline.signal });
        // Reading the body is part of the try: an answer that stalls half way times out too.
        text = response.status === 204 ? "" : await response.text();
      } catch (error) {
        const failure = deadline.failure(error, `${method} ${url}`);
        // The request may have reached the server: only a repeatable one is sent again.
        if (!(failure instanceof ConnectionError) || !options.repeatable || attempt >= this.maxRetries) throw failure;
        await sleep(backoff(attempt), options.signal);
        continue;
      } finally {
        deadline.close();
      }
      if (response.ok) return { data: (text ? JSON.parse(text) : undefined) as T, response, rateLimit: rateLimitOf(response.headers) };
      const problem = ProblemError.of(response, text);
      // A 429 was not acted on, so it may always be tried again; a 5xx only when repeating is safe.
      const again = problem.status === 429 || (problem.status >= 500 && options.repeatable);
      if (!again || attempt >= this.maxRetries) throw problem;
      await sleep(retryDelay(problem, attempt), options.signal);
    }
  }
}
