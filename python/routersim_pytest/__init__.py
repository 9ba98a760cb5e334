"""routersim's pytest plugin: `pytest --routersim DIR` gates a pytest run on `routersim check`.

The plugin itself is in `routersim_pytest.plugin`; pytest loads it through the wheel's
`pytest11` entry point.
"""
