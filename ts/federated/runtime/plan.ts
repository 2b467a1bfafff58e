/**
 * Federations as steps of a larger computation (an experiment that runs an
 * association, then a federation per community): the computation is a
 * generator that yields each federation's roles and is sent back its run's
 * result, so the same code runs in process (runPlanSync) or over a network
 * (runPlan with a runner, e.g. over an MQTT broker) without being written
 * twice. The plan owns the roles it yields and disposes them once their run
 * is back, or when the driver throws the run's error into it.
 */
import { InProcessTransport } from '../transport/in-process.js';
import type { Encoding } from '../messages/codec.js';
import type { FederationPolicy } from './policy.js';
import type { ClientRole, ServerRole } from './roles.js';
import { runFederationSync, type FederationResult, type RunHooks, type RunOptions } from './run.js';

export interface FederationJob {
  /** what the federation is for (e.g. 'association', 'fedavg', 'fedgengmm'): runners may name topics after it */
  purpose: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  server: ServerRole<any, any>;
  clients: ClientRole[];
  /** how failures are handled (default { onInvalid: 'fail' }), the clients excluded before the run, and the run's hooks */
  policy?: JobPolicy;
  /** the wire form of the messages in process (default 'binary') */
  encoding?: Encoding | 'none';
}

/** A job's policy, the clients its plan left out before the run (RunOptions.excludedBefore), and its run's hooks. */
export type JobPolicy = FederationPolicy & Pick<RunOptions, 'excludedBefore'> & RunHooks;

/** The options a job runs with: its policy, by default failing on any invalid client (a plan's federations are its own steps). */
export function jobPolicy(job: FederationJob): JobPolicy {
  return job.policy ?? { onInvalid: 'fail' };
}

/** A computation that needs federations run: it yields each job and is sent back its run's result. */
export type FederationPlan<T> = Generator<FederationJob, T, FederationResult>;

/** Runs a plan's federations in process, synchronously. */
export function runPlanSync<T>(plan: FederationPlan<T>): T {
  let step = plan.next();
  while (!step.done) {
    const job = step.value;
    let run: FederationResult;
    try {
      run = runFederationSync(job.server, new InProcessTransport(job.clients, { encoding: job.encoding ?? 'binary' }), jobPolicy(job));
    } catch (e) {
      // the plan's finally blocks dispose the job's roles; the error goes on
      plan.throw(e);
      throw e;
    }
    step = plan.next(run);
  }
  return step.value;
}

/** Runs a plan's federations with `run` (e.g. over an MQTT broker), one after another. */
export async function runPlan<T>(plan: FederationPlan<T>, run: (job: FederationJob) => Promise<FederationResult>): Promise<T> {
  let step = plan.next();
  while (!step.done) {
    let result: FederationResult;
    try {
      result = await run(step.value);
    } catch (e) {
      plan.throw(e);
      throw e;
    }
    step = plan.next(result);
  }
  return step.value;
}
