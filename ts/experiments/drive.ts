/**
 * Drivers of an experiment written once as a generator (FedGenGMM's, FedDistr's):
 * it yields every job it needs run and is handed back each job's answer, so
 * the same steps run in process and synchronously, or over any transport. A
 * job's error is thrown into the generator, whose own finally blocks then free
 * what the job held before the error reaches the caller.
 */
export function drive<J, A, R>(steps: Generator<J, R, A>, run: (job: J) => A): R {
  let step = steps.next();
  while (!step.done) {
    let answer: A;
    try {
      answer = run(step.value);
    } catch (e) {
      step = steps.throw(e);
      continue;
    }
    step = steps.next(answer);
  }
  return step.value;
}

/** drive with jobs that answer asynchronously (workers, a broker). */
export async function driveAsync<J, A, R>(steps: Generator<J, R, A>, run: (job: J) => Promise<A>): Promise<R> {
  let step = steps.next();
  while (!step.done) {
    let answer: A;
    try {
      answer = await run(step.value);
    } catch (e) {
      step = steps.throw(e);
      continue;
    }
    step = steps.next(answer);
  }
  return step.value;
}
