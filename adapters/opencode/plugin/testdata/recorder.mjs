#!/usr/bin/env node
// A stand-in for mnemo-hook in the plugin's tests. It saves its arguments,
// its stdin and the times it started and finished in $REC_DIR, waits
// $REC_SLEEP_<EVENT> milliseconds, then prints $REC_ANSWER_<EVENT> (else {}).
// Each file appears whole (written aside, then renamed): the tests poll.
import fs from "node:fs";
import path from "node:path";

const event = process.argv[4] ?? "";
const base = path.join(process.env.REC_DIR, `${process.hrtime.bigint()}-${process.pid}`);
const started = Date.now();
const chunks = [];
process.stdin.on("data", (b) => chunks.push(b));
process.stdin.on("end", () => {
  const rec = { args: process.argv.slice(2), pid: process.pid, started, stdin: Buffer.concat(chunks).toString("utf8") };
  put(`${base}.json`, JSON.stringify(rec));
  setTimeout(() => {
    put(`${base}.done`, String(Date.now()));
    process.stdout.write(process.env[`REC_ANSWER_${event}`] || "{}");
  }, Number(process.env[`REC_SLEEP_${event}`] || 0));
});

function put(file, data) {
  fs.writeFileSync(`${file}.tmp`, data);
  fs.renameSync(`${file}.tmp`, file);
}
