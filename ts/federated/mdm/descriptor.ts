/** The MDM (mixture of Dirichlet-multinomials) federation as the registry runs it by name (serve/join, worker lanes, `fedmix server/client --algorithm mdm`). */
import { InvalidDataError, InvalidParameterError } from '../../errors.js';
import { Matrix } from '../../data/matrix.js';
import { DirichletMultinomialMixture } from '../../models/dirichlet-multinomial-mixture.js';
import * as v from 'valibot';
import { expectResult, savedCount, savedNumber, savedRng, serverState } from '../registry/artifact.js';
import { GUARDS } from './server.js';
import { defineAlgorithm } from '../registry/registry.js';
import { MdmClient } from './client.js';
import { MDM_PROTOCOL } from './messages.js';
import { clientOptions, serverOptions } from './options.js';
import { MdmServer } from './server.js';

/** An MDM server's state between rounds (MdmServer.saveState). */
const STATE = v.object({
  phase: v.picklist(['init', 'em', 'done']),
  emRounds: savedCount(),
  model: v.nullable(v.pipe(v.unknown(), v.transform((m) => DirichletMultinomialMixture.fromJSON(m as string)))),
  history: v.array(
    v.object({ round: savedCount(), clients: savedCount(), meanLogLikelihood: v.optional(savedNumber()), unsupported: v.optional(savedCount()), guards: v.array(v.picklist(GUARDS)) }),
  ),
  initGuards: v.array(v.picklist(GUARDS)),
  rng: savedRng(),
});

export const mdm = defineAlgorithm({
  name: 'mdm',
  protocol: MDM_PROTOCOL,
  summary: "a mixture of Dirichlet-multinomials over the clients' histograms: federated EM (Algorithm 2), each client one histogram",
  wasmFeatures: ['dirichlet'],
  server: {
    // checked once here; the roles take the resolved options as they are
    options: (raw) => serverOptions.check(raw),
    create: (options) => new MdmServer(options),
  },
  state: serverState('mdm', MdmServer, (options: ConstructorParameters<typeof MdmServer>[0]) => new MdmServer(options), STATE),
  client: {
    options: (raw) => clientOptions.check(raw),
    create: ({ id, data, options }) => {
      if (data.nRows !== 1) throw new InvalidParameterError(`an MDM client's data is its histogram: one row of counts, got ${data.nRows} rows`);
      return new MdmClient(id, data.data, options);
    },
  },
  artifact: {
    save: (model: DirichletMultinomialMixture) => {
      expectResult('mdm', 'a DirichletMultinomialMixture', model, (m) => m instanceof DirichletMultinomialMixture);
      return model.toJSON();
    },
    load: (json) => DirichletMultinomialMixture.fromJSON(json as string),
    model: (m: DirichletMultinomialMixture) => m,
  },
  cli: {
    server: {
      options: {
        components: { type: 'int', help: 'K' },
        rounds: { type: 'int', help: "Algorithm 2's rounds (default 100)" },
        categories: { type: 'int', help: 'C, the categories of every histogram (required)' },
        'max-count': { type: 'int', help: 'N, the largest client size the model covers (required)' },
        cohort: { type: 'int', help: 'clients per round (default: all)' },
      },
      read: (o, { required, seed }) => ({ nComponents: required('components'), nCategories: required('categories'), maxCount: required('max-count'), rounds: o.rounds, cohort: o.cohort, seed }),
    },
    client: {
      options: {
        counts: { type: 'string', help: 'the histogram, comma-separated counts' },
        category: { type: 'string', help: 'the CSV column whose values are counted' },
        categories: { type: 'string', help: "the categories in the federation's order, comma-separated (with --category)" },
      },
      read: (_o, { seed }) => ({ seed }),
      // the client's histogram as one row: --counts, or a column of --data counted over --categories
      data: async (o, { required, list, readTable }) => {
        if (o.counts !== undefined) return { data: Matrix.fromRows([list('counts')!.map(Number)]) };
        const table = await readTable(required<string>('data'));
        const j = table.column(required('category'));
        const cats = list('categories') ?? required<string[]>('categories');
        const counts = new Array<number>(cats.length).fill(0);
        table.texts(j).forEach((v, i) => {
          const k = cats.indexOf(v.trim());
          if (k < 0) throw new InvalidDataError(`data row ${i + 1}: category "${v}" is not among --categories (${cats.join(', ')})`);
          counts[k]! += 1;
        });
        return { data: Matrix.fromRows([counts]) };
      },
    },
  },
});
