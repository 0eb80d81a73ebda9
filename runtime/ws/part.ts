import { PARTS } from '../parts.js';

/** The ws part (placeholder until it is built). */
PARTS.push({ name: 'ws' });
