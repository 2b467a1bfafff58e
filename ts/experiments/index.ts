/**
 * fedmix/experiments: the papers' experiments, apart from the library. Each
 * runner reproduces a paper's tables on any labelled data set: every method
 * and baseline, the partitions, the scores averaged over repeats. Each lives in
 * its algorithm's folder (./fedgengmm/, ./fedgem/, ./communities/, ./feddistr/)
 * beside its `fedmix` command (command.ts; ./commands.ts lists them for the
 * CLI, apart from this entry: they are Node only), and EXPERIMENTS.md's
 * numbers come from them.
 *
 * An application needs none of this: it imports the models, the federated
 * algorithms, the transports and `partition` from `fedmix`. Import both
 * entries to run an experiment (they share one copy of the library: one WASM
 * instance, one Matrix class), and call `init()` of `fedmix` first.
 *
 * - FedGenGMM (anomaly detection): runFedGenGMMExperiment over a table read
 *   with labelledFromCsv.
 * - Community-based anomaly detection: trainCommunities (one detector per
 *   group of clients, scored on each client's labelled test rows), the
 *   paper's tables, and runCommunityExperiment (the sweep over p and q).
 * - FedDistr: runFedDistrExperiment over task classes made of subclasses
 *   (groupSubclasses, subclassDataFromCsv, fashionMnistSubclasses).
 *
 * @module fedmix/experiments
 */
// the experiments run every method: every module's files
import '../wasm/files-all.generated.js';

export {
  trainCommunities,
  groupsByClass,
  communityMembership,
  communityRandIndex,
  mergedCommunityAuc,
  aucByClient,
  formatCommunityTables,
  COMMUNITY_DETECTORS,
  type CommunityDetector,
  type CommunityClient,
  type CommunityTrainingOptions,
  type CommunityTrainingResult,
  type ClientScore,
  type GroupTraining,
  type MembershipTable,
  type MergedClassAuc,
  type CommunityTables,
  type ClientClasses,
  type ClientAucs,
} from './communities/training.js';
export {
  runExperimentAsync as runFedGenGMMExperiment,
  runExperiment as runFedGenGMMExperimentSync,
  METHODS as FEDGENGMM_EXPERIMENT_METHODS,
  type ExperimentConfig as FedGenGMMExperimentConfig,
  type ExperimentReport as FedGenGMMExperimentReport,
  type ExperimentRunOptions as FedGenGMMExperimentOptions,
  type ExperimentHooks as FedGenGMMExperimentHooks,
  type Method as FedGenGMMExperimentMethod,
  type MethodSummary as FedGenGMMMethodSummary,
  type RunScores as FedGenGMMRunScores,
} from './fedgengmm/run.js';
export { labelledFromCsv, type LabelledData, type CsvDataOptions } from './dataset.js';
export type { PartitionScheme } from './partitioning.js';
export {
  runCommunityExperiment,
  type CommunityDataset,
  type CommunityExperimentConfig,
  type CommunityExperimentReport,
  type CommunityPartitionRun,
  type CommunityAssociationRun,
  type CommunitySummaryRow,
  type MeanStd as CommunityMeanStd,
} from './communities/sweep.js';
export {
  runFedDistrExperiment,
  roundsToReach,
  groupSubclasses,
  fashionMnistSubclasses,
  subclassDataFromCsv,
  parseTaskGroups,
  FASHION_MNIST_TASK_GROUPS,
  LETTER_TASK_GROUPS,
  BASELINES as FEDDISTR_BASELINES,
  GLOBAL_MODELS as FEDDISTR_GLOBAL_MODELS,
  type SubclassData,
  type SubclassCsvOptions,
  type FedDistrExperimentData,
  type FedDistrExperimentConfig,
  type FedDistrExperimentReport,
  type Baseline as FedDistrBaseline,
  type GlobalModel as FedDistrGlobalModel,
  type CurvePoint,
  type BaselineRun,
  type BaselineSummary,
  type FedDistrRun,
  type RepeatRun,
  type MeanStd,
} from './feddistr/run.js';
