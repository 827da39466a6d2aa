// `ai` imports the AI Gateway provider (@ai-sdk/gateway, about 80 KiB minified, 19 KiB gzip) for model ids given
// as strings, and its error classes to recognise the gateway's errors. The service passes model objects only
// (agent/model.ts), so wrangler.jsonc aliases the package to this module: no gateway error can occur, and a
// string model id fails with a sentence saying why.
const notBundled = (): never => {
  throw new Error("The AI Gateway provider is not bundled (src/bundle/no-gateway.ts): pass a model object, not a model id string.");
};

export class GatewayError extends Error {
  static isInstance(_error: unknown): boolean {
    return false;
  }
}
export class GatewayAuthenticationError extends GatewayError {}
export const createGateway = notBundled;
export const gateway = { specificationVersion: "v4", languageModel: notBundled, embeddingModel: notBundled, imageModel: notBundled };
