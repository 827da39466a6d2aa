import { type StreamResponse, TaskState } from "@a2a-js/sdk";
import { V03PushNotificationSerializer } from "@a2a-js/sdk/compat/v0_3/server";
import { V1PushNotificationSerializer } from "@a2a-js/sdk/server";
import type { ChainAsTask } from "../chats/chain-schemas";
import type { Question } from "../chats/question-schemas";
import type { PushDeliveryRead } from "../chats/room-calls";
import { USAGE_EXTENSION } from "./card";
import { a2aStateOf, isTerminal, questionMessage, taskOf, usageOf } from "./task-shape";

const serializers = { "1.0": new V1PushNotificationSerializer(), "0.3": new V03PushNotificationSerializer() };

/**
 * A push's body, by the SDK's serializer for the protocol its config was created through: a state the task entered as
 * `{ statusUpdate }` (a question's with the question message), its end as `{ task }` with its artifacts and no history.
 * The status is the one the event told, when it was entered; what the task cost is as it now stands. A v0.3 receiver
 * gets the Task, its status the one told.
 */
export function pushBody(read: PushDeliveryRead): string {
  const current = JSON.parse(read.task) as ChainAsTask;
  const question = read.question === null ? null : (JSON.parse(read.question) as Question);
  const state = a2aStateOf(read.told.state, question);
  const waiting = state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED;
  const status = {
    state,
    message: waiting && question ? questionMessage(question, current.chain.rootId, current.contextId) : undefined,
    timestamp: new Date(read.told.at).toISOString(),
  };
  const task = taskOf(current, { historyLength: 0 });
  const told = isTerminal(state) ? task : { ...task, status };
  const response: StreamResponse = isTerminal(state)
    ? { payload: { $case: "task", value: task } }
    : {
        payload: {
          $case: "statusUpdate",
          value: { taskId: current.chain.rootId, contextId: current.contextId, status, metadata: { [USAGE_EXTENSION]: usageOf(current) } },
        },
      };
  return serializers[read.protocol].serialize(response, read.protocol === "0.3" ? told : undefined).body as string;
}
