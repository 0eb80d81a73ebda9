/**
 * Registers every daemon part, in start order. Each import adds itself to PARTS.
 */
import './resources/part.js';
import './txt/part.js';
import './demo/part.js';
import './metrics/part.js';
import './auth/part.js';
import './cluster/part.js';
import './health/part.js';
import './dns/part.js';
import './bgp/part.js';
import './ws/part.js';
import './mail/part.js';
import './forms/part.js';
import './alerts/part.js';
import '../controller/part.js';
