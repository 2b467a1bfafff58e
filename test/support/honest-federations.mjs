// Honest federations on real data: every check a server or an aggregator
// applies to what clients send must let through all that honest clients send,
// at the defaults, under the partitions of issue 23 (IID, Dir(0.1), Dir(0.3),
// one class per client, quantity skew, and a client with far fewer rows than
// features). Each run counts its exclusions by cause; the bar is zero.
// Plain JavaScript on the fedmix module it is handed (`f`):
// test/honest-federations.test.ts runs a small sample with ts/index.ts,
// scripts/honest-federations.mjs every dataset with dist/.

export const SCHEMES = ['iid', 'dir-0.1', 'dir-0.3', 'one-class', 'quantity-skew', 'tiny-client'];

/** Rows a client of the 'tiny-client' scheme holds: far fewer than the features (a quarter, 2 to 9). */
export const tinyRows = (nFeatures) => Math.max(2, Math.min(9, Math.floor(nFeatures / 4)));

/**
 * Row indices per client. Every client gets at least 2 rows (minSize 2): a
 * Gaussian mixture needs 2 rows (as scikit-learn's), and a client of one row
 * refuses to train, which is a property of its data, not a check.
 */
export function honestPartition(f, scheme, classes, { clients, nFeatures, seed }) {
  const p = f.partition;
  const nClasses = new Set(classes).size;
  switch (scheme) {
    case 'iid':
      return p.iid(classes, { clients, seed }).indices;
    case 'dir-0.1':
      return p.dirichlet(classes, { clients, alpha: 0.1, minSize: 2, seed }).indices;
    case 'dir-0.3':
      return p.dirichlet(classes, { clients, alpha: 0.3, minSize: 2, seed }).indices;
    case 'one-class':
      return p.quantity(classes, { clients, alpha: 1, minSize: 2, seed }).indices;
    case 'quantity-skew':
      // every class everywhere, client sizes from Dir(1, ..., 1)
      return p.quantity(classes, { clients, alpha: nClasses, imbalance: 'clients', minSize: 2, seed }).indices;
    case 'tiny-client': {
      // an IID split, and one more client cut from the first: far fewer rows than features
      const parts = p.iid(classes, { clients: clients - 1, seed }).indices.map((r) => Array.from(r));
      const tiny = parts[0].splice(0, tinyRows(nFeatures));
      return [...parts, tiny];
    }
    default:
      throw new Error(`unknown scheme ${scheme}`);
  }
}

/** An anomaly set has no classes: its k-means clusters (10) stand in for Dir(alpha) and one class per client. */
export function classesOf(f, X, labels, seed) {
  if (labels) return labels;
  const km = new f.KMeans({ nClusters: 10, seed }).fit(X);
  try {
    return Int32Array.from(km.predict(X));
  } finally {
    km.dispose?.();
  }
}

/**
 * FedGenGMM at its defaults (clients: BIC over 1..10, diag; the server's step,
 * nComponents global components) on the clients' rows. `featureRange` declares
 * the rows' range to the server (its check of every upload). `suspects`, when
 * given, maps the local models to the indices the server's scale suspicion
 * would name (consulted only after a failed fit); they are counted too.
 */
export function honestFedGenGMM(f, X, parts, { nComponents, serverStep, featureRange, seed, suspects }) {
  const clients = parts.map((rows) => X.selectRows(rows));
  const r = f.fedGenGMM(clients, { server: { nComponents, seed, ...(serverStep ? { serverStep } : {}), ...(featureRange ? { featureRange } : {}) }, keepLocalModels: true });
  try {
    const named = suspects ? suspects(r.localModels.map((m) => m.model)).map((i) => r.localModels[i].client) : undefined;
    return { clients: parts.length, excluded: r.excluded, suspects: named, incoming: r.incomingComponents, model: r.model.nComponents };
  } finally {
    for (const m of r.localModels) m.model.dispose();
    r.model.dispose();
  }
}

/** A histogram per client of its rows' classes (C = every class of the data). */
export function histograms(classes, parts) {
  const c = Math.max(...classes) + 1;
  return parts.map((rows) => {
    const h = new Array(c).fill(0);
    for (const i of rows) h[classes[i]] += 1;
    return h;
  });
}

/**
 * Federated MDM at its defaults (every client every round, 100 rounds) on
 * the clients' class histograms, as `variant` says: 'fit' (fitMdm, K = 3),
 * 'groups' (the clients in 4 MdmUserGroups), 'select' (selectMdm over 1..3:
 * the evaluation round too), 'privacy' (noise and clipping: the clip bound).
 * A run the data cannot make (single-class clients only: no maximum-likelihood
 * estimate) is an error, counted apart from exclusions.
 */
export function honestMdm(f, hist, variant, { seed, rounds = 100 }) {
  const k = Math.min(3, hist.length);
  try {
    switch (variant) {
      case 'fit':
        return { clients: hist.length, excluded: f.fitMdm(hist, { nComponents: k, rounds, seed }).excluded };
      case 'groups':
        return { clients: hist.length, excluded: f.fitMdm(hist, { nComponents: k, rounds, seed, groups: Math.min(4, hist.length) }).excluded };
      case 'privacy':
        return { clients: hist.length, excluded: f.fitMdm(hist, { nComponents: k, rounds, seed, privacy: { noiseMultiplier: 1, clip: 5 }, noiseSeed: seed }).excluded };
      case 'select': {
        const r = f.selectMdm(hist, { kRange: [1, k], rounds, seed, validationCohort: Math.max(k, Math.floor(hist.length / 4)) });
        // the candidates' fits and the validation round
        return { clients: hist.length, excluded: [...r.candidates.flatMap((c) => c.fit.excluded), ...r.excluded] };
      }
      default:
        throw new Error(`unknown variant ${variant}`);
    }
  } catch (e) {
    if (!(e instanceof f.FedmixError)) throw e;
    return { clients: hist.length, excluded: [], error: `${e.name}: ${e.message}` };
  }
}
