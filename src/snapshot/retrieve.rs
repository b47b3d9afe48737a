//! Getting back what a lossy level hid, from the raw snapshot text.
