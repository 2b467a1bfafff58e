/**
 * workerd's program: a Worker (bundled by the test with esbuild, as wrangler
 * would) that answers GET /check with the checks in process and GET /join
 * with a client joining a federation, inside that request. workerd compiles
 * no WebAssembly from bytes at run time: each module of the SIMD build comes
 * as a compiled WebAssembly.Module imported by the Worker (a "wasm" module of
 * its configuration) and is handed to init({ wasm }).
 */
import * as fedmix from 'fedmix';
import core from 'fedmix/fedmix-simd.wasm';
import dem from 'fedmix/fedmix-simd-dem.wasm';
import fedgem from 'fedmix/fedmix-simd-fedgem.wasm';
import { inProcess, joinFederation } from './checks.mjs';
import data from './data.json';

const wasm = { simd: { core, dem, fedgem } };

export default {
  async fetch(request) {
    const url = new URL(request.url);
    try {
      if (url.pathname === '/check') {
        const out = await inProcess(fedmix, { rows: data.rows, wasm });
        // a module the Worker did not import cannot be found beside the code: init() says what to pass instead
        const missing = await fedmix.init({ wasm, features: ['svm'] }).then(
          () => 'loaded',
          (e) => `${e.name}: ${e.message}`,
        );
        return Response.json({ runtime: `workerd (${navigator.userAgent})`, ...out, missing });
      }
      if (url.pathname === '/join') {
        const q = url.searchParams;
        await fedmix.init({ wasm, features: ['dem', 'fedgem'] });
        return Response.json(await joinFederation(fedmix, { rows: data.rows[Number(q.get('slice'))], url: q.get('url'), federation: q.get('federation'), id: q.get('id'), password: q.get('password') }));
      }
      return new Response('not found', { status: 404 });
    } catch (e) {
      return Response.json({ error: `${e?.name}: ${e?.message}\n${e?.stack ?? ''}` }, { status: 500 });
    }
  },
};
