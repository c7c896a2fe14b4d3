// The tally of scripts/helm-check.mjs: each check prints one line and counts as passed, failed or skipped.

export const tally = { passed: 0, failed: 0, skipped: 0 };

export function ok(msg) {
  tally.passed++;
  console.log(`  ok    ${msg}`);
}
export function bad(msg) {
  tally.failed++;
  console.log(`  FAIL  ${msg}`);
}
export function skip(msg) {
  tally.skipped++;
  console.log(`  skip  ${msg}`);
}
export function check(cond, msg) {
  if (cond) ok(msg);
  else bad(msg);
  return cond;
}
export function section(title) {
  console.log(`\n${title}`);
}
