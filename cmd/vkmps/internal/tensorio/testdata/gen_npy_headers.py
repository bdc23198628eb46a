#!/usr/bin/python3
"""Writes npy_headers.json: .npy files whose headers numpy.load accepts
but numpy.save never writes (other spacing, key order, quotes, comments,
integer spellings, dtype spellings, format 3.0) and headers it refuses,
each with numpy.load's verdict: the shape, dtype and values it read, or
its error. TestNumpyHeaderVerdicts holds tensorio to the same verdicts.

Run with the system Python (numpy 1.24):
    /usr/bin/python3 testdata/gen_npy_headers.py > testdata/npy_headers.json
"""
import base64, io, json, struct
import numpy as np

def npy(header, data, version=1):
    h = header.encode('utf-8' if version == 3 else 'latin1')
    if version == 1:
        return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + data
    return b'\x93NUMPY' + bytes([version, 0]) + struct.pack('<I', len(h)) + h + data

V = [1.5, -2.0, 0.25, 3.0, -0.5, 7.0]
f4 = np.array(V, '<f4').tobytes()
f8 = np.array(V, '<f8').tobytes()
bf4 = np.array(V, '>f4').tobytes()
bf8 = np.array(V, '>f8').tobytes()

D = "'descr': '<f4'"
O = "'fortran_order': False"
S = "'shape': (2, 3)"
cases = [
    # spacing and layout
    ("numpy's own", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + " " * 60 + "\n", f4, 1),
    ("no spaces", "{'descr':'<f4','fortran_order':False,'shape':(2,3)}", f4, 1),
    ("no trailing comma, no newline", "{%s, %s, %s}" % (D, O, S), f4, 1),
    ("extra spaces", "{  'descr' :  '<f4' ,  'fortran_order' : False ,'shape' :( 2 , 3 ) ,  }   \n", f4, 1),
    ("tabs and newlines", "{\n\t'descr':\t'<f4',\n\t'fortran_order': False,\n\t'shape': (\n2,\n3\n),\n}\n", f4, 1),
    ("leading spaces", "   {%s, %s, %s}\n" % (D, O, S), f4, 1),
    ("line continuation", "{%s, \\\n%s, %s}\n" % (D, O, S), f4, 1),
    ("comment", "{%s, # the type\n%s, %s} # numpy ignores this\n" % (D, O, S), f4, 1),
    # key order and quotes
    ("shape first", "{%s, %s, %s}" % (S, O, D), f4, 1),
    ("order first", "{%s, %s, %s}" % (O, S, D), f4, 1),
    ("double quotes", '{"descr": "<f4", "fortran_order": False, "shape": (2, 3)}', f4, 1),
    ("mixed quotes", "{\"descr\": '<f4', 'fortran_order': False, \"shape\": (2, 3)}", f4, 1),
    ("u prefix", "{u'descr': u'<f4', u'fortran_order': False, u'shape': (2, 3)}", f4, 1),
    ("raw string", "{r'descr': r'<f4', 'fortran_order': False, 'shape': (2, 3)}", f4, 1),
    ("adjacent strings", "{'descr': '<f' '4', 'fortran_order': False, 'shape': (2, 3)}", f4, 1),
    ("triple quotes", "{'''descr''': \"\"\"<f4\"\"\", 'fortran_order': False, 'shape': (2, 3)}", f4, 1),
    ("escapes", "{'d\\x65scr': '\\x3cf4', 'fortran_order': False, 'shape': (2, 3)}", f4, 1),
    ("duplicate key", "{'descr': '<i4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", f4, 1),
    # integers
    ("hex and octal", "{%s, %s, 'shape': (0x2, 0o3)}" % (D, O), f4, 1),
    ("binary and underscores", "{%s, %s, 'shape': (0b1_0, 3)}" % (D, O), f4, 1),
    ("negative zero", "{%s, %s, 'shape': (-0+2, 3)}" % (D, O), f4, 1),
    ("plus sign", "{%s, %s, 'shape': (+2, 3)}" % (D, O), f4, 1),
    ("parenthesized", "{%s, %s, 'shape': ((2), (3))}" % (D, O), f4, 1),
    ("python 2 longs", "{%s, %s, 'shape': (2L, 3L), }\n" % (D, O), f4, 1),
    ("python 2 longs, format 2.0", "{%s, %s, 'shape': (2L, 3L), }\n" % (D, O), f4, 2),
    ("trailing comma in shape", "{%s, %s, 'shape': (2, 3,)}" % (D, O), f4, 1),
    ("rank 3", "{%s, %s, 'shape': (1, 2, 3)}" % (D, O), f4, 1),
    ("rank 4", "{%s, %s, 'shape': (1, 2, 3, 1)}" % (D, O), f4, 1),
    ("Fortran, one long axis", "{%s, 'fortran_order': True, 'shape': (1, 6)}" % D, f4, 1),
    # dtype spellings
    ("=f4", "{'descr': '=f4', %s, %s}" % (O, S), f4, 1),
    ("|f4", "{'descr': '|f4', %s, %s}" % (O, S), f4, 1),
    ("f4", "{'descr': 'f4', %s, %s}" % (O, S), f4, 1),
    ("float32", "{'descr': 'float32', %s, %s}" % (O, S), f4, 1),
    ("f", "{'descr': 'f', %s, %s}" % (O, S), f4, 1),
    ("single", "{'descr': 'single', %s, %s}" % (O, S), f4, 1),
    (">f4", "{'descr': '>f4', %s, %s}" % (O, S), bf4, 1),
    ("<f8", "{'descr': '<f8', %s, %s}" % (O, S), f8, 1),
    (">f8", "{'descr': '>f8', %s, %s}" % (O, S), bf8, 1),
    ("d", "{'descr': 'd', %s, %s}" % (O, S), f8, 1),
    ("float64", "{'descr': 'float64', %s, %s}" % (O, S), f8, 1),
    ("double", "{'descr': 'double', %s, %s}" % (O, S), f8, 1),
    ("float", "{'descr': 'float', %s, %s}" % (O, S), f8, 1),
    # format 2.0 and 3.0
    ("format 2.0", "{%s, %s, %s}\n" % (D, O, S), f4, 2),
    ("format 3.0", "{%s, %s, %s}\n" % (D, O, S), f4, 3),
    ("format 3.0, UTF-8 comment", "{%s, %s, %s} # caf\u00e9\n" % (D, O, S), f4, 3),
    # refused by numpy
    ("python 2 longs, format 3.0", "{%s, %s, 'shape': (2L, 3L), }\n" % (D, O), f4, 3),
    ("shape a list", "{%s, %s, 'shape': [2, 3]}" % (D, O), f4, 1),
    ("shape of floats", "{%s, %s, 'shape': (2.0, 3)}" % (D, O), f4, 1),
    ("shape an int", "{%s, %s, 'shape': 6}" % (D, O), f4, 1),
    ("fortran_order 0", "{%s, 'fortran_order': 0, %s}" % (D, S), f4, 1),
    ("fortran_order a string", "{%s, 'fortran_order': 'False', %s}" % (D, S), f4, 1),
    ("missing key", "{%s, %s}" % (D, S), f4, 1),
    ("extra key", "{%s, %s, %s, 'x': 1}" % (D, O, S), f4, 1),
    ("not a dictionary", "[%s]" % D.replace(':', ','), f4, 1),
    ("a set", "{'descr', 'fortran_order', 'shape'}", f4, 1),
    ("unclosed", "{%s, %s, %s" % (D, O, S), f4, 1),
    ("a name", "{%s, 'fortran_order': false, %s}" % (D, S), f4, 1),
    ("a call", "{%s, %s, 'shape': tuple([2, 3])}" % (D, O), f4, 1),
    ("bytes descr", "{'descr': b'<f4', %s, %s}" % (O, S), f4, 1),
    ("unknown dtype", "{'descr': '<q7', %s, %s}" % (O, S), f4, 1),
    ("leading zero", "{%s, %s, 'shape': (02, 3)}" % (D, O), f4, 1),
    ("leading zero with underscore", "{%s, %s, 'shape': (0_2, 3)}" % (D, O), f4, 1),
    ("too little data", "{%s, %s, %s}" % (D, O, S), f4[:20], 1),
    # numpy reads them; vkmps refuses them as unsupported
    ("rank 1", "{%s, %s, 'shape': (6,)}" % (D, O), f4, 1),
    ("int32", "{'descr': '<i4', %s, %s}" % (O, S), np.arange(6, dtype='<i4').tobytes(), 1),
    ("float16", "{'descr': '<f2', %s, %s}" % (O, S), np.arange(6, dtype='<f2').tobytes(), 1),
    ("structured", "{'descr': [('x', '<f4')], %s, %s}" % (O, S), f4, 1),
    ("structured string", "{'descr': 'f4,f4', %s, 'shape': (3,)}" % O, f4, 1),
]

out = []
for name, header, data, version in cases:
    b = npy(header, data, version)
    c = {"name": name, "file": base64.b64encode(b).decode()}
    try:
        a = np.load(io.BytesIO(b))
        c["shape"] = list(a.shape)
        c["dtype"] = str(a.dtype)
        if a.dtype.kind == 'f' and a.dtype.itemsize >= 4:
            c["values"] = [float(v) for v in np.ravel(a, order='C')]
    except Exception as e:
        c["error"] = "%s: %s" % (type(e).__name__, str(e)[:120])
    out.append(c)
print(json.dumps({"numpy": np.__version__, "cases": out}, indent=1))
