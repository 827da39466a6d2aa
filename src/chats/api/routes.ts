import type { GatedEnv } from "../../auth/gate";
import { createRouter } from "../../http/router";
import { chainRoutes } from "./chain-routes";
import { controlRoutes } from "./control-routes";
import { eventRoutes } from "./event-routes";
import { forkRoutes } from "./fork-routes";
import { chatLifecycleRoutes } from "./lifecycle-routes";
import { messageRoutes } from "./message-routes";
import { questionRoutes } from "./question-routes";

/** The chats of a project, under /v1/projects/{projectId}/chats: their lifecycle and forks, messages, control, questions, chains and events. */
export const chatRoutes = createRouter<GatedEnv>();
chatRoutes.route("/", chatLifecycleRoutes);
chatRoutes.route("/", forkRoutes);
chatRoutes.route("/", messageRoutes);
chatRoutes.route("/", controlRoutes);
chatRoutes.route("/", questionRoutes);
chatRoutes.route("/", chainRoutes);
chatRoutes.route("/", eventRoutes);
