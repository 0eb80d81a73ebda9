import { PARTS } from '../runtime/parts.js';

/** The gitops part (placeholder until it is built). */
PARTS.push({ name: 'gitops' });
