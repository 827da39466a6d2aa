// The baseline: the same runtime and harness, no routing, no storage, a fixed small JSON body.
const body = JSON.stringify({ ok: true, service: "bare", items: [1, 2, 3] });

export default {
  fetch() {
    return new Response(body, { headers: { "content-type": "application/json" } });
  },
};
