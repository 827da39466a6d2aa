import type { IfBusy } from "../schemas";
import type { SubmissionStatus } from "./submission-storage";

/** What the chat is doing when a submission arrives: busy (anything queued, steering, dispatching or running), working (a task running or dispatching), held (maintenance). */
type ChatNow = { busy: boolean; working: boolean; held: boolean };
/** How an accepted submission joins the chat: the status it is stored with, what its 202 says, and whether it interrupts the work under way. */
type Joining = { status: Extract<SubmissionStatus, "steering" | "dispatching" | "queued">; disposition: "started" | "queued"; interrupting: boolean };

/**
 * If-Busy, decided: reject refuses a busy chat; steer is taken by the task on its way (even one not started yet, as
 * isWorking shows); interrupt goes first and is dispatched at once unless maintenance holds it; queue waits its turn.
 * On an idle chat every value sends as queue does.
 */
export function joining(ifBusy: IfBusy, now: ChatNow): Joining | "chat_busy" {
  if (now.busy && ifBusy === "reject") return "chat_busy";
  if (ifBusy === "steer" && now.working) return { status: "steering", disposition: "queued", interrupting: false };
  const interrupting = now.busy && ifBusy === "interrupt";
  const started = !now.held && (interrupting || !now.busy);
  return { status: started ? "dispatching" : "queued", disposition: started ? "started" : "queued", interrupting };
}
