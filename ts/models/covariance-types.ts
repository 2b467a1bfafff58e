/** The covariance types of a Gaussian mixture (scikit-learn's), below the models and the option atoms that name them. */
export const COVARIANCE_TYPES = ['full', 'tied', 'diag', 'spherical'] as const;
export type CovarianceType = (typeof COVARIANCE_TYPES)[number];
