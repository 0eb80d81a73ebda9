/** Registers every gslbctl command. */
import './validate-config.js';
