/**
 * Preloaded into every service the local stack starts (`node --import`): should the stack
 * disappear without stopping the service (SIGKILL, a crash before its exit hooks ran), the
 * service sends itself SIGTERM within a quarter of a second and stops the way it always does.
 * Services run in process groups of their own, so nothing else would ever stop them.
 */
import { watchParent } from './parent.js';

const stack = process.ppid;
watchParent(stack, () => {
  process.stderr.write(`[stack] the stack (pid ${stack}) is gone; stopping\n`);
  process.kill(process.pid, 'SIGTERM');
});
