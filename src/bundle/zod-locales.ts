// zod's namespace re-exports every locale (`z.locales`), and the namespace object keeps them all in the bundle
// (about 260 KB raw). wrangler.jsonc aliases zod's locales index to this module: English, the one locale the
// service uses (zod registers it by default), stays available as z.locales.en.
export { default as en } from "zod/v4/locales/en.js";
