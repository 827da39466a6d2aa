import { tokenGate, type GatedEnv } from "../../auth/gate";
import { jsonBodyGuard } from "../../http/json-body";
import { limitBody } from "../../http/middleware";
import { createRouter } from "../../http/router";
import { controlRoutes } from "./control-routes";
import { eventRoutes } from "./event-routes";
import { chatLifecycleRoutes } from "./lifecycle-routes";
import { messageRoutes } from "./message-routes";
import { questionRoutes } from "./question-routes";
import { MESSAGE_BODY_LIMIT_BYTES } from "../schemas";
import { projectRoutes } from "../../projects/routes";
import { webhookRoutes } from "../../webhooks/routes";
import { projectCreditRoutes } from "../../credits/routes";

/** The project-chat API, mounted at /v1/projects: personal API tokens only, counted per token. */
export const chatRoutes = createRouter<GatedEnv>();
// Never below the largest valid message body, however the client escapes its characters.
chatRoutes.use("*", limitBody(MESSAGE_BODY_LIMIT_BYTES), tokenGate, jsonBodyGuard);
chatRoutes.route("/", projectRoutes);
chatRoutes.route("/", chatLifecycleRoutes);
chatRoutes.route("/", messageRoutes);
chatRoutes.route("/", controlRoutes);
chatRoutes.route("/", questionRoutes);
chatRoutes.route("/", eventRoutes);
chatRoutes.route("/", webhookRoutes);
chatRoutes.route("/", projectCreditRoutes);
