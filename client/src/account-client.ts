import { ApiPromise, everyItem, itemsOf } from "./answer.ts";
import type { components } from "./generated/api.ts";
import { type CallOptions, type ClientOptions, callOptions, Http } from "./http.ts";

type Schemas = components["schemas"];
export type ApiTokenItem = Schemas["ApiTokenItem"];
export type CreatedApiToken = Schemas["CreatedApiToken"];
export type Scope = ApiTokenItem["scopes"][number];
export type AccountCredits = Schemas["AccountCredits"];
/** One entry of the statement; `kind` is charge, refund or adjustment today, and may be others later. */
export type StatementItem = Schemas["StatementItem"];
export type StatementPageOptions = CallOptions & { cursor?: string; limit?: number };

/** A signed-in account (its session token): personal API tokens, the credits statement, and signing out. Every method takes `signal` and `timeout`. */
export class AccountClient {
  readonly session: string;
  readonly tokens: {
    /** A personal API token; its secret (`token`) is in this answer only. */
    create(input: { name: string; scopes: Scope[]; expiresAt: string; creditLimit?: number | null }, options?: CallOptions): ApiPromise<CreatedApiToken>;
    list(options?: CallOptions): ApiPromise<ApiTokenItem[]>;
    /** Sets (a number) or removes (null) the token's credit limit; it holds for tasks dispatched after the call. */
    setCreditLimit(tokenId: string, creditLimit: number | null, options?: CallOptions): ApiPromise<ApiTokenItem>;
    revoke(tokenId: string, options?: CallOptions): ApiPromise<void>;
  };
  /** The account's own credits: an API token cannot read them. */
  readonly credits: {
    /** The balance and one page of the statement, newest first; `nextCursor` (null on the last page) asks for the next, older one. */
    page(options?: StatementPageOptions): ApiPromise<AccountCredits>;
    /** Every entry of the statement, newest first, page after page (the signal and timeout apply to each page). */
    list(options?: Omit<StatementPageOptions, "cursor">): AsyncIterable<StatementItem>;
  };
  private readonly http: Http;

  constructor(options: ClientOptions & { session: string }) {
    this.session = options.session;
    const http = (this.http = new Http(options, options.session));
    this.tokens = {
      // Not repeated after a network error: a second try would make a second token.
      create: (input, options) =>
        new ApiPromise<CreatedApiToken>(http.request<CreatedApiToken>("POST", "/auth/api-tokens", { body: input, repeatable: false, ...callOptions(options) })),
      list: (options) => itemsOf(http.request<{ items: ApiTokenItem[] }>("GET", "/auth/api-tokens", { repeatable: true, ...callOptions(options) })),
      setCreditLimit: (tokenId, creditLimit, options) =>
        new ApiPromise<ApiTokenItem>(
          http.request<ApiTokenItem>("PATCH", `/auth/api-tokens/${encodeURIComponent(tokenId)}`, { body: { creditLimit }, repeatable: true, ...callOptions(options) }),
        ),
      revoke: (tokenId, options) =>
        new ApiPromise<void>(http.request<void>("DELETE", `/auth/api-tokens/${encodeURIComponent(tokenId)}`, { repeatable: true, ...callOptions(options) })),
    };
    const page = (options: StatementPageOptions = {}) =>
      new ApiPromise<AccountCredits>(
        http.request<AccountCredits>("GET", "/auth/credits", { query: { limit: options.limit, cursor: options.cursor }, repeatable: true, ...callOptions(options) }),
      );
    this.credits = { page, list: (options = {}) => everyItem((cursor) => page({ ...options, cursor })) };
  }

  /** Signs in with email and password: the account session. */
  static async signIn(options: ClientOptions & CallOptions & { email: string; password: string }): Promise<AccountClient> {
    const http = new Http(options);
    const { data } = await http.request<Schemas["SessionToken"]>("POST", "/auth/token", {
      body: { email: options.email, password: options.password },
      repeatable: false,
      signal: options.signal,
    });
    return new AccountClient({ ...options, session: data.token });
  }

  /** Ends this session (its API tokens stay valid). */
  signOut(options?: CallOptions): ApiPromise<void> {
    return new ApiPromise<void>(this.http.request<void>("DELETE", "/auth/token", { repeatable: true, ...callOptions(options) }));
  }
}
