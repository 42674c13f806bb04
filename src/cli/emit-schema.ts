import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { printGatewaySchema } from '../graphql/schema';

/** Writes schema/schema.graphql from the code-first schema (`npm run schema:emit`). */
const target = resolve(__dirname, '../../schema/schema.graphql');
writeFileSync(target, printGatewaySchema());
console.log(`wrote ${target}`);
