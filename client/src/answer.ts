/** What is left of the token's rolling minute, from the RateLimit and RateLimit-Policy headers. */
export type RateLimit = { limit: number; remaining: number; resetSeconds: number };

/** A parsed body with the answer it came in (status and headers; its body already read). */
export type WithResponse<T> = {
  data: T;
  response: Response;
  /** Absent on answers that are not rate limited (the /auth ones). */
  rateLimit: RateLimit | null;
};

/** An answer that carries Chat-Event-Id: open the chat's events `after` it to miss nothing and repeat nothing. */
export type WithEventId<T> = WithResponse<T> & { chatEventId: number };

/**
 * A call's parsed body, awaited like any promise; `withResponse()` gives the same call's answer with
 * it. The call starts at once, and the body is parsed once whichever way it is read.
 */
export class ApiPromise<T, R extends WithResponse<T> = WithResponse<T>> extends Promise<T> {
  readonly #answer: Promise<R>;
  #data: Promise<T> | undefined;

  constructor(answer: Promise<R>) {
    // The base promise is a placeholder: then/catch/finally read the answer, so a rejection is reported where it is awaited.
    super((resolve) => resolve(undefined as T));
    this.#answer = answer;
  }

  // Promises made from this one (by then, finally, Promise.all) are plain ones.
  static override get [Symbol.species]() {
    return Promise;
  }

  withResponse(): Promise<R> {
    return this.#answer;
  }

  // The reasons are `any` as in Promise's own signatures, so handlers type as they do on any promise.
  // biome-ignore lint/suspicious/noThenProperty: a promise's then, reading the answer
  // biome-ignore lint/suspicious/noExplicitAny: Promise's own signature
  override then<A = T, B = never>(onfulfilled?: ((value: T) => A | PromiseLike<A>) | null, onrejected?: ((reason: any) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.#body().then(onfulfilled, onrejected);
  }

  // biome-ignore lint/suspicious/noExplicitAny: Promise's own signature
  override catch<B = never>(onrejected?: ((reason: any) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.#body().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#body().finally(onfinally);
  }

  #body(): Promise<T> {
    this.#data ??= this.#answer.then((answer) => answer.data);
    return this.#data;
  }
}

/** A list answer's items, as the call's body (the headers stay). */
export const itemsOf = <T>(answer: Promise<WithResponse<{ items: T[] }>>) => new ApiPromise<T[]>(answer.then((a): WithResponse<T[]> => ({ ...a, data: a.data.items })));

/** Every item of a paged list, page after page: `page` is asked for the page after `cursor` until one has no nextCursor. */
export const everyItem = <T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>): AsyncIterable<T> => ({
  async *[Symbol.asyncIterator]() {
    let cursor: string | undefined;
    do {
      const next = await page(cursor);
      yield* next.items;
      cursor = next.nextCursor ?? undefined;
    } while (cursor);
  },
});

/** Reads Chat-Event-Id, which the chat, its queue and its message pages always carry. */
export const withEventId = <T>(answer: WithResponse<T>): WithEventId<T> => ({ ...answer, chatEventId: Number(answer.response.headers.get("chat-event-id")) });

export function rateLimitOf(headers: Headers): RateLimit | null {
  const state = headers.get("ratelimit");
  const policy = headers.get("ratelimit-policy");
  if (!state || !policy) return null;
  // Structured-field parameters: `"per-token";r=59;t=60` and `"per-token";q=60;w=60`.
  const parameter = (field: string, name: string) => Number(new RegExp(`;\\s*${name}=(\\d+)`).exec(field)?.[1] ?? Number.NaN);
  const rateLimit = { limit: parameter(policy, "q"), remaining: parameter(state, "r"), resetSeconds: parameter(state, "t") };
  return Object.values(rateLimit).every(Number.isFinite) ? rateLimit : null;
}
