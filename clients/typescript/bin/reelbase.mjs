#!/usr/bin/env node
// The `reelbase` command (Node 20 or newer); the code is compiled to dist/ by `npm run build`.
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv);
