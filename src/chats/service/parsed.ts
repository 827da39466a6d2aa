import type { JsonText } from "../../http/router";
import type { Served } from "./chat-service";

/**
 * What the chat's object hands over as JSON text (a chain, a question, the chat list, a replayed chat), parsed for a
 * channel that shows it; a value it handed over as it is stays so. Apart from the service, so a tool's schema can be
 * read where the service's objects cannot be loaded.
 */
export function parsed<T>(answer: Served<T | JsonText<T>>): Served<T> {
  return answer.ok && typeof answer.body === "string" ? { ...answer, body: JSON.parse(answer.body) as T } : (answer as Served<T>);
}
