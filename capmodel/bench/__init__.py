"""capmodel.bench"""
