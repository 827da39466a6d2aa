/** The API could not be reached, or the connection broke before its answer was read: `cause` is the runtime's own error. */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ConnectionError";
  }
}

/** No answer within the call's timeout (`timeout`, in milliseconds). */
export class TimeoutError extends ConnectionError {
  readonly timeout: number;

  constructor(timeout: number) {
    super(`no answer within ${timeout} ms`);
    this.name = "TimeoutError";
    this.timeout = timeout;
  }
}
