import { PARTS } from '../parts.js';

/** The alerts part (placeholder until it is built). */
PARTS.push({ name: 'alerts' });
