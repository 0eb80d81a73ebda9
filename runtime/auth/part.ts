import { PARTS } from '../parts.js';

/** The auth part (placeholder until it is built). */
PARTS.push({ name: 'auth' });
