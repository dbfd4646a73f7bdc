// The gateway's public API over gRPC-Web, with the client generated from proto/ (src/gen).
// The page calls its own origin by default (the gateway serves the page and the API on the
// same --web-listen port); another gateway can be set in the settings (it must allow this
// page's origin with --cors-allow-origin). The API key lives in sessionStorage only.

import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { GatewayService } from "./gen/chess/v1/gateway_pb.js";
import { GameService, RulesService } from "./gen/chess/v1/rules_pb.js";
import { AnalysisService } from "./gen/chess/v1/search_pb.js";
import { BadRequestSchema } from "./gen/google/rpc/error_details_pb.js";
import { t } from "./i18n.js";

const KEY = "chess.apiKey";
const GATEWAY = "chess.gateway";

export function apiKey(): string {
  return sessionStorage.getItem(KEY) ?? "";
}

export function gatewayUrl(): string {
  return sessionStorage.getItem(GATEWAY) ?? "";
}

export function saveSettings(key: string, gateway: string): void {
  if (key.trim()) sessionStorage.setItem(KEY, key.trim());
  else sessionStorage.removeItem(KEY);
  if (gateway.trim()) sessionStorage.setItem(GATEWAY, gateway.trim().replace(/\/+$/, ""));
  else sessionStorage.removeItem(GATEWAY);
  clients = makeClients();
}

const auth: Interceptor = (next) => (request) => {
  const key = apiKey();
  if (key) request.header.set("authorization", `Bearer ${key}`);
  return next(request);
};

function makeClients() {
  const transport = createGrpcWebTransport({
    baseUrl: gatewayUrl() || window.location.origin,
    useBinaryFormat: true,
    interceptors: [auth],
  });
  return {
    gateway: createClient(GatewayService, transport),
    rules: createClient(RulesService, transport),
    games: createClient(GameService, transport),
    analysis: createClient(AnalysisService, transport),
  };
}

let clients = makeClients();

export function api(): ReturnType<typeof makeClients> {
  return clients;
}

/** The error as a person wants to read it: the code, the message, and each bad field. */
export function describeError(error: unknown): string {
  if (error instanceof ConnectError) {
    const parts = [`${Code[error.code] ?? error.code}: ${error.rawMessage}`];
    for (const detail of error.findDetails(BadRequestSchema)) {
      for (const violation of detail.fieldViolations) {
        parts.push(`${t("field")} ${violation.field}: ${violation.description}`);
      }
    }
    return parts.join("\n");
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

export function isAbort(error: unknown): boolean {
  return error instanceof ConnectError && error.code === Code.Canceled;
}

/** Whether the call failed because the server could not be reached (worth retrying). */
export function isUnreachable(error: unknown): boolean {
  return (
    error instanceof ConnectError &&
    (error.code === Code.Unavailable || error.code === Code.Unknown || error.code === Code.Internal) &&
    !/^\w+: /.test(error.rawMessage) &&
    /fetch|network|Failed|load/i.test(error.rawMessage)
  );
}
