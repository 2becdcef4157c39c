#pragma once
// What a scheme declares about itself (SchemeTraits, Family): the scheme
// seam's header for them. They are defined below the schemes, in
// txn/scheme_traits.h, where the transaction layer reads them too.
#include "txn/scheme_traits.h"
