"""capmodel.plots"""
