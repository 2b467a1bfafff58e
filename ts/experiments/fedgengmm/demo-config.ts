/**
 * The settings of `fedmix demo` and of the browser demo (demo/): the FedGenGMM
 * paper's experiment on the embedded thyroid set, whose inliers are made
 * heterogeneous with the shift scheme (5 artificial classes, 2 per client) and
 * dealt to 10 clients; FedGenGMM's clients choose K by BIC in 1..8, the global
 * K is 8; every method, 3 repeats. Plain data, no imports: the browser demo
 * takes it from here, beside the library it loads.
 */
export const DEMO_CONFIG = {
  clients: 10,
  partition: 'shift',
  alpha: 2,
  beta: 0.3,
  classes: 5,
  components: 8,
  clientKRange: [1, 8],
  covarianceType: 'diag',
  h: 100,
  tol: 1e-3,
  repeats: 3,
  seed: 0,
  encoding: 'binary',
} as const;
