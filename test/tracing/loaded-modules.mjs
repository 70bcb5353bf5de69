// Preloaded into a service under test (NODE_OPTIONS=--import): at exit, writes the files of every CommonJS module
// the process loaded (the OpenTelemetry packages are CommonJS) to LOADED_MODULES_FILE, for the test to look at.
import { writeFileSync } from 'node:fs';
import Module from 'node:module';

process.on('exit', () => {
  writeFileSync(process.env.LOADED_MODULES_FILE, JSON.stringify(Object.keys(Module._cache)));
});
